// The related pane: beside the open note, the memories that name it and the memories and
// notes nearest to it, with why, when and from where; it follows the person between notes.
import { ItemView, TFile, WorkspaceLeaf } from "obsidian";
import { debounced, safely } from "./guard";
import type { PluginHost } from "./host";
import { RelatedModel, type RelatedRow } from "./related-model";

export const RELATED_VIEW = "vaultmem-related";
const SETTLE_MS = 300;

export class RelatedView extends ItemView {
	private readonly model: RelatedModel;
	private shownPath: string | null = null;
	private titleEl!: HTMLElement;
	private listEl!: HTMLElement;
	private readonly follow = debounced(SETTLE_MS, () => safely("related", () => this.update(false)));

	constructor(
		leaf: WorkspaceLeaf,
		private readonly host: PluginHost,
	) {
		super(leaf);
		this.model = new RelatedModel(host.client, () => host.data.relatedK);
	}

	getViewType(): string {
		return RELATED_VIEW;
	}

	getDisplayText(): string {
		return "vaultmem related";
	}

	getIcon(): string {
		return "brain";
	}

	async onOpen(): Promise<void> {
		const root = this.contentEl;
		root.empty();
		root.addClass("vaultmem-pane", "vaultmem-related");
		const head = root.createDiv({ cls: "vaultmem-toolbar" });
		this.titleEl = head.createEl("h4", { cls: "vaultmem-pane-title", text: "Related memories" });
		const refresh = head.createEl("button", { text: "Refresh", cls: "vaultmem-refresh" });
		refresh.addEventListener("click", () => safely("related", () => this.update(true)));
		this.listEl = root.createDiv({ cls: "vaultmem-list" });
		this.registerEvent(this.app.workspace.on("file-open", () => this.follow()));
		this.registerEvent(this.app.workspace.on("active-leaf-change", () => this.follow()));
		await this.update(true);
	}

	async onClose(): Promise<void> {
		this.follow.cancel();
		this.contentEl.empty();
	}

	/** Lists what is related to the active note; unchanged note → nothing to do unless forced. */
	async update(force: boolean): Promise<void> {
		const file = this.app.workspace.getActiveFile();
		if (!file || file.extension !== "md") {
			this.shownPath = null;
			this.titleEl.setText("Related memories");
			this.message("Open a note to see the memories related to it.");
			return;
		}
		if (!force && file.path === this.shownPath) return;
		this.shownPath = file.path;
		this.titleEl.setText(`Related to ${file.basename}`);
		this.message("Loading…");
		const outcome = await this.model.rowsFor(file.path);
		if (outcome === null) return; // the person moved on; the newer request draws
		if (outcome.kind !== "ok") {
			this.shownPath = null; // try again on the next move or poll
			this.message(outcome.message, outcome.kind);
			return;
		}
		this.render(file, outcome.value);
	}

	private message(text: string, kind = "info"): void {
		this.listEl.empty();
		this.listEl.createDiv({ cls: `vaultmem-message vaultmem-message-${kind}`, text });
	}

	private render(file: TFile, rows: RelatedRow[]): void {
		this.listEl.empty();
		if (rows.length === 0) {
			this.message(`No memories or notes near “${file.basename}” yet.`);
			return;
		}
		for (const row of rows) {
			const item = this.listEl.createDiv({ cls: "vaultmem-hit", attr: { "data-open": row.open } });
			const head = item.createDiv({ cls: "vaultmem-card-head" });
			head.createSpan({ cls: `vaultmem-badge vaultmem-type-${row.type}`, text: row.type });
			const title = head.createEl("a", { cls: "vaultmem-hit-title", text: row.title });
			title.addEventListener("click", () => this.host.open(row.open, file.path));
			item.createDiv({ cls: "vaultmem-card-text", text: row.text });
			const why = item.createDiv({ cls: "vaultmem-why" });
			why.createSpan({ cls: "vaultmem-why-label", text: row.why });
			if (row.date) why.createSpan({ cls: "vaultmem-muted", text: ` · ${row.date}` });
			if (row.sourceLink) {
				why.createSpan({ cls: "vaultmem-muted", text: " · " });
				const link = row.sourceLink;
				const source = why.createEl("a", { cls: "vaultmem-source", text: row.source });
				source.addEventListener("click", () => this.host.open(link, file.path));
			}
		}
	}
}
