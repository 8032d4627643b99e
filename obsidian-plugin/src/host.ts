// What the views and the modal need from the plugin (kept apart so they do not import main.ts).
import type { App } from "obsidian";
import type { DaemonClient } from "./api";
import type { VaultmemData } from "./settings";

export interface PluginHost {
	app: App;
	client: DaemonClient;
	data: VaultmemData;
	saveSettings(): Promise<void>;
	/** Opens a link the way a click in a note would ("Garden plan#Budget"). */
	open(linktext: string, sourcePath?: string): void;
}
