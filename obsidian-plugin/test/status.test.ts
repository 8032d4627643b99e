// The status line from the real daemon, and from a daemon that was started and then stopped.
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { statusLine } from "../src/present";
import { newVault, removeVault, startDaemon, stopDaemon, vaultmem, waitFor } from "./support/daemon";
import { clientFor, shared } from "./support/client";

const daemon = shared();

describe.skipIf(!!daemon.skip)("status", () => {
	test("a watching daemon: up, with the model", async () => {
		const line = statusLine(await clientFor(daemon.vault, daemon.token).status());
		expect(line.kind).toBe("up");
		expect(line.text).toBe("vaultmem ● watching · all-MiniLM-L6-v2");
		expect(line.detail).toContain("for default");
	});

	test("a daemon that was stopped: not running, and the message says how to start it", async () => {
		const vault = newVault("stopped");
		try {
			vaultmem(daemon.cli, vault, ["init", vault, "--model", "all-MiniLM-L6-v2", "--json"]);
			const second = startDaemon(daemon.cli, vault);
			const client = clientFor(vault, second.token);
			await waitFor("the second daemon to answer", 120, async () => ((await client.status()).kind === "ok" ? true : null));
			stopDaemon(daemon.cli, vault);
			expect(existsSync(path.join(vault, ".vaultmem", "obsidian.json"))).toBe(false);
			const line = statusLine(await client.status());
			expect(line.kind).toBe("down");
			expect(line.text).toBe("vaultmem ○ not running");
			expect(line.detail).toBe(`The vaultmem daemon is not running — run \`vaultmem daemon start\` in ${vault}`);
			// the old address, as a killed daemon would leave it, refuses too
			const stale = await clientFor(vault, second.token, { urlOverride: () => second.url }).status();
			expect(stale.kind).toBe("down");
		} finally {
			stopDaemon(daemon.cli, vault);
			removeVault(vault);
		}
	});
});
