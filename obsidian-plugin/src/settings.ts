// Settings and the token. The token opens the person's memory, so it goes to Obsidian's
// secret storage (1.11.4+), which stays on this device; plugin data (data.json) is synced
// with the vault, so it is only the fallback, with a warning in the settings tab.
import { App, Plugin, PluginSettingTab, Setting } from "obsidian";
import type { Scope } from "./types";

export interface VaultmemData {
	/** Empty: read the daemon's address from .vaultmem/obsidian.json. */
	urlOverride: string;
	relatedK: number;
	/** When the person last opened the review (local ISO time), the review's default start. */
	lastReviewed: string | null;
	/** Memory ids accepted in the review pane. */
	accepted: string[];
	searchScope: Scope;
	/** Only where secret storage is missing (older Obsidian). */
	token?: string;
}

export const DEFAULT_DATA: VaultmemData = {
	urlOverride: "",
	relatedK: 8,
	lastReviewed: null,
	accepted: [],
	searchScope: "all",
};

const SECRET_ID = "vaultmem-token";
const MAX_ACCEPTED = 2000;

export interface SettingsHost {
	app: App;
	data: VaultmemData;
	saveSettings(): Promise<void>;
	tokens: TokenStore;
	/** Re-checks the daemon (after the token or URL changed). */
	refreshStatus(announce: boolean): Promise<void>;
}

export class TokenStore {
	constructor(
		private readonly app: App,
		private readonly host: Pick<SettingsHost, "data" | "saveSettings">,
	) {}

	get secure(): boolean {
		const storage = (this.app as Partial<App>).secretStorage;
		return !!storage && typeof storage.getSecret === "function";
	}

	get(): string {
		if (this.secure) return this.app.secretStorage.getSecret(SECRET_ID) ?? "";
		return this.host.data.token ?? "";
	}

	async set(token: string): Promise<void> {
		const value = token.trim();
		if (this.secure) {
			this.app.secretStorage.setSecret(SECRET_ID, value);
			if (this.host.data.token) delete this.host.data.token;
		} else {
			this.host.data.token = value;
		}
		await this.host.saveSettings();
	}
}

/** Adds an accepted id, keeping the list bounded (the oldest fall off). */
export function remember(accepted: string[], id: string): string[] {
	if (accepted.includes(id)) return accepted;
	return [...accepted, id].slice(-MAX_ACCEPTED);
}

export class VaultmemSettingTab extends PluginSettingTab {
	constructor(
		app: App,
		private readonly host: Plugin & SettingsHost,
	) {
		super(app, host);
	}

	display(): void {
		const { containerEl } = this;
		containerEl.empty();
		const host = this.host;

		new Setting(containerEl)
			.setName("Token")
			.setDesc("Run `vaultmem obsidian token` in the vault and paste what it prints.")
			.addText((text) => {
				text.inputEl.type = "password";
				text.setPlaceholder("vm_…").setValue(host.tokens.get());
				text.onChange(async (value) => {
					await host.tokens.set(value);
					await host.refreshStatus(false);
				});
			});
		if (!host.tokens.secure) {
			containerEl.createEl("p", {
				cls: "vaultmem-warning",
				text:
					"This Obsidian has no secret storage (1.11.4 or later has it), so the token is kept in the plugin's data.json, " +
					"which syncs with the vault. Anyone who can read the vault's files can use it while the daemon runs.",
			});
		}

		new Setting(containerEl)
			.setName("Daemon URL")
			.setDesc("Leave empty: the plugin reads it from .vaultmem/obsidian.json, written by the running daemon.")
			.addText((text) =>
				text
					.setPlaceholder("http://127.0.0.1:PORT")
					.setValue(host.data.urlOverride)
					.onChange(async (value) => {
						host.data.urlOverride = value.trim();
						await host.saveSettings();
					}),
			);

		new Setting(containerEl)
			.setName("Related memories")
			.setDesc("How many hits the related pane lists.")
			.addText((text) => {
				text.inputEl.type = "number";
				text.setValue(String(host.data.relatedK)).onChange(async (value) => {
					const k = Number.parseInt(value, 10);
					if (Number.isFinite(k) && k > 0 && k <= 50) {
						host.data.relatedK = k;
						await host.saveSettings();
					}
				});
			});

		new Setting(containerEl)
			.setName("Connection")
			.setDesc("Ask the daemon how it is.")
			.addButton((button) => button.setButtonText("Check").onClick(() => void host.refreshStatus(true)));
	}
}
