// The plugin's own DaemonClient, pointed at a test vault on disk (as Obsidian's adapter reads it).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { DaemonClient, type ClientOptions } from "../../src/api";
import type { SharedDaemon } from "../global-setup";
import { vaultmem, writeTranscript, type Line } from "./daemon";

export function shared(): SharedDaemon {
	return inject("daemon");
}

export function clientFor(vault: string, token: string, extra: Partial<ClientOptions> = {}): DaemonClient {
	return new DaemonClient({
		readVaultFile: async (relative) => readFileSync(path.join(vault, relative), "utf8"),
		token: () => token,
		vaultPath: vault,
		...extra,
	});
}

/** A fresh extract of one conversation into the shared vault, through its daemon. */
export function extract(daemon: SharedDaemon, session: string, lines: Line[]): { run: string; notes: string[]; decisions: any[] } {
	const dir = mkdtempSync(path.join(os.tmpdir(), "vaultmem-plugin-chat-"));
	try {
		return vaultmem(daemon.cli, daemon.vault, ["extract", writeTranscript(dir, session, lines), "--json"]);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** Yesterday at midnight, local time, as the review's `since`. */
export function sinceYesterday(): string {
	const day = new Date(Date.now() - 24 * 3600 * 1000);
	const pad = (n: number) => String(n).padStart(2, "0");
	return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}T00:00:00`;
}
