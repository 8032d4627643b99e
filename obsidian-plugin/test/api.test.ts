// DaemonClient against the real daemon: the token, discovery, and every way it can fail
// turned into an outcome the panes can show (never a throw).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { NO_TOKEN_MESSAGE, readAnswer } from "../src/api";
import { clientFor, shared } from "./support/client";

const daemon = shared();

/** Where the daemon listens now (the UI suite restarts it, on a new port). */
function liveUrl(): string {
	return JSON.parse(readFileSync(path.join(daemon.vault, ".vaultmem", "obsidian.json"), "utf8")).url;
}

/** A loopback port that was just free: nothing listens there. */
async function closedPort(): Promise<number> {
	const server = net.createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const port = (server.address() as net.AddressInfo).port;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

describe.skipIf(!!daemon.skip)("DaemonClient with a running daemon", () => {
	test("finds the daemon through .vaultmem/obsidian.json and reads its status", async () => {
		const client = clientFor(daemon.vault, daemon.token);
		expect(await client.locate()).toBe(liveUrl());
		expect(liveUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
		const outcome = await client.status();
		expect(outcome.kind).toBe("ok");
		if (outcome.kind !== "ok") return;
		expect(outcome.value.running).toBe(true);
		expect(outcome.value.state).toBe("watching");
		expect(outcome.value.model).toBe("all-MiniLM-L6-v2");
		expect(outcome.value.user).toBe("default");
	});

	test("a wrong token is refused: unauthorized, with the command that makes a new one", async () => {
		const outcome = await clientFor(daemon.vault, "vm_not-the-token").search("tomatoes");
		expect(outcome.kind).toBe("unauthorized");
		if (outcome.kind === "ok") return;
		expect(outcome.message).toContain("vaultmem obsidian token --new");
	});

	test("no token at all asks for one without calling the daemon", async () => {
		const outcome = await clientFor(daemon.vault, "").status();
		expect(outcome).toEqual({ kind: "unauthorized", message: NO_TOKEN_MESSAGE });
	});

	test("an operation the plugin is not given comes back as the daemon's refusal", async () => {
		const outcome = await clientFor(daemon.vault, daemon.token).call("extract", { paths: ["x.jsonl"] });
		expect(outcome.kind).toBe("error");
		if (outcome.kind !== "error") return;
		expect(outcome.status).toBe(403);
		expect(outcome.code).toBe("forbidden");
		expect(outcome.message).toContain("not served to the Obsidian plugin");
	});

	test("a note that is not there is the daemon's note_not_found, not a throw", async () => {
		const outcome = await clientFor(daemon.vault, daemon.token).forget("no such memory at all");
		expect(outcome.kind).toBe("error");
		if (outcome.kind !== "error") return;
		expect(outcome.code).toBe("note_not_found");
	});

	test("the URL override wins over the discovery file", async () => {
		const url = liveUrl();
		const client = clientFor("/nonexistent-vault", daemon.token, { urlOverride: () => `${url}/` });
		expect(await client.locate()).toBe(url);
		expect((await client.status()).kind).toBe("ok");
	});
});

describe("DaemonClient without a daemon", () => {
	test("a URL where nothing listens is down, naming `vaultmem daemon start` and the vault", async () => {
		const port = await closedPort();
		const client = clientFor("/tmp/some vault", "vm_x", { urlOverride: () => `http://127.0.0.1:${port}` });
		const outcome = await client.status();
		expect(outcome.kind).toBe("down");
		if (outcome.kind === "ok") return;
		expect(outcome.message).toBe("The vaultmem daemon is not running — run `vaultmem daemon start` in /tmp/some vault");
	});

	test("no discovery file (the daemon is stopped) is down", async () => {
		const vault = mkdtempSync(path.join(os.tmpdir(), "vaultmem-plugin-empty-"));
		try {
			const outcome = await clientFor(vault, "vm_x").review();
			expect(outcome.kind).toBe("down");
			if (outcome.kind === "ok") return;
			expect(outcome.message).toContain("`vaultmem daemon start`");
		} finally {
			rmSync(vault, { recursive: true, force: true });
		}
	});

	test("a discovery file left by a killed daemon (its port refuses) is down", async () => {
		const vault = mkdtempSync(path.join(os.tmpdir(), "vaultmem-plugin-stale-"));
		try {
			const port = await closedPort();
			mkdirSync(path.join(vault, ".vaultmem"));
			writeFileSync(path.join(vault, ".vaultmem", "obsidian.json"), JSON.stringify({ url: `http://127.0.0.1:${port}`, port, pid: 1 }));
			const outcome = await clientFor(vault, "vm_x").related("Projects/Garden plan.md");
			expect(outcome.kind).toBe("down");
		} finally {
			rmSync(vault, { recursive: true, force: true });
		}
	});

	test("an answer that is not JSON is an error outcome naming the HTTP status", () => {
		const outcome = readAnswer(502, "<html>Bad gateway</html>");
		expect(outcome.kind).toBe("error");
		if (outcome.kind !== "error") return;
		expect(outcome.message).toContain("HTTP 502");
	});
});
