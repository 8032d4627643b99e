// vaultmem for Obsidian: the review pane, the related pane, the search modal and the status
// bar item, all through one DaemonClient to the vault's running vaultmem daemon.
import { FileSystemAdapter, Plugin, WorkspaceLeaf } from "obsidian";
import { DaemonClient } from "./api";
import { safely } from "./guard";
import type { PluginHost } from "./host";
import { RELATED_VIEW, RelatedView } from "./related-view";
import { REVIEW_VIEW, ReviewView } from "./review-view";
import { SearchModal } from "./search-modal";
import { DEFAULT_DATA, TokenStore, VaultmemSettingTab, type SettingsHost, type VaultmemData } from "./settings";
import { POLL_MS, StatusIndicator } from "./status";

export default class VaultmemPlugin extends Plugin implements PluginHost, SettingsHost {
	data: VaultmemData = { ...DEFAULT_DATA };
	tokens!: TokenStore;
	client!: DaemonClient;
	private status!: StatusIndicator;

	async onload(): Promise<void> {
		this.data = { ...DEFAULT_DATA, ...((await this.loadData()) as Partial<VaultmemData> | null) };
		this.tokens = new TokenStore(this.app, this);
		this.client = new DaemonClient({
			readVaultFile: (path) => this.app.vault.adapter.read(path),
			token: () => this.tokens.get(),
			urlOverride: () => this.data.urlOverride,
			vaultPath: vaultFolder(this),
		});

		this.registerView(REVIEW_VIEW, (leaf) => new ReviewView(leaf, this));
		this.registerView(RELATED_VIEW, (leaf) => new RelatedView(leaf, this));

		this.addCommand({
			id: "review",
			name: "Review new memories",
			callback: () => safely("review", () => this.reveal(REVIEW_VIEW)),
		});
		this.addCommand({
			id: "related",
			name: "Show related memories",
			callback: () => safely("related", () => this.reveal(RELATED_VIEW)),
		});
		this.addCommand({
			id: "search",
			name: "Search memory",
			callback: () => safely("search", () => new SearchModal(this).open()),
		});
		this.addCommand({
			id: "status",
			name: "Status",
			callback: () => safely("status", () => this.refreshStatus(true)),
		});

		this.status = new StatusIndicator(this.addStatusBarItem(), this.client);
		this.registerInterval(window.setInterval(() => safely("status", () => this.refreshStatus(false)), POLL_MS));
		this.app.workspace.onLayoutReady(() => safely("status", () => this.refreshStatus(false)));
		this.addSettingTab(new VaultmemSettingTab(this.app, this));
	}

	async saveSettings(): Promise<void> {
		await this.saveData(this.data);
	}

	async refreshStatus(announce: boolean): Promise<void> {
		await this.status.refresh(announce);
	}

	open(linktext: string, sourcePath = ""): void {
		safely("open", () => this.app.workspace.openLinkText(linktext, sourcePath, false));
	}

	/** Shows the pane of `type` in the right sidebar, making it the first time. */
	private async reveal(type: string): Promise<void> {
		const { workspace } = this.app;
		let leaf: WorkspaceLeaf | null = workspace.getLeavesOfType(type)[0] ?? null;
		if (!leaf) {
			leaf = workspace.getRightLeaf(false);
			if (!leaf) return;
			await leaf.setViewState({ type, active: true });
		}
		await workspace.revealLeaf(leaf);
	}
}

/** The vault's folder on disk (desktop), named in the "not running" message. */
function vaultFolder(plugin: Plugin): string | null {
	const adapter = plugin.app.vault.adapter;
	return adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null;
}
