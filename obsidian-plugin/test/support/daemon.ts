// A real vaultmem vault and daemon for the suites: `vaultmem init`, a few of the person's
// notes, a transcript, the plugin's token, `daemon start`. Nothing here fakes vaultmem.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PLUGIN_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** $VAULTMEM_BIN, else the repository's ../.venv/bin/vaultmem, else `vaultmem` on PATH. */
export function findCli(): string | null {
	const fromEnv = process.env.VAULTMEM_BIN;
	if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
	const venv = path.resolve(PLUGIN_DIR, "../.venv/bin/vaultmem");
	if (existsSync(venv)) return venv;
	for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
		const candidate = path.join(dir, "vaultmem");
		if (dir && existsSync(candidate)) return candidate;
	}
	return null;
}

export const NO_CLI_LINE =
	"obsidian-plugin: daemon tests skipped — no vaultmem CLI (run `make install` at the repository root, or set VAULTMEM_BIN)";

/** Runs the CLI on `vault`; `--json` answers are parsed. Throws with stderr on failure. */
export function vaultmem(cli: string, vault: string, args: string[]): any {
	const env = { ...process.env };
	delete env.VAULTMEM_VAULT; // the suites name their vault with --vault, always
	try {
		const out = execFileSync(cli, ["--vault", vault, ...args], { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
		return args.includes("--json") ? JSON.parse(out) : out;
	} catch (error) {
		const failure = error as { stderr?: string; message: string };
		throw new Error(`vaultmem ${args.join(" ")} failed: ${failure.stderr || failure.message}`);
	}
}

export function git(vault: string, args: string[]): string {
	return execFileSync("git", ["-C", vault, ...args], { encoding: "utf8" });
}

/** A fresh vault with the person's notes (a heading, a block id) and no daemon yet. */
/** A fresh vault folder, "My vault" (the name Obsidian's title bar shows in the screenshots),
 * in a temporary folder of its own: remove it with `removeVault`. */
export function newVault(label: string): string {
	const vault = path.join(mkdtempSync(path.join(os.tmpdir(), `vaultmem-plugin-${label}-`)), "My vault");
	mkdirSync(vault);
	return vault;
}

export function removeVault(vault: string): void {
	rmSync(path.dirname(vault), { recursive: true, force: true });
}

export function seedNotes(vault: string): void {
	mkdirSync(path.join(vault, "Projects"), { recursive: true });
	writeFileSync(
		path.join(vault, "Projects", "Garden plan.md"),
		[
			"# Garden plan",
			"",
			"The vegetable garden goes behind the shed, in the sunny south corner.",
			"",
			"## Budget",
			"",
			"We will spend at most 300 euros on seeds, soil and raised beds this spring.",
			"Tomato seedlings cost 4 euros each at the market.",
			"",
			"## Layout",
			"",
			"Tomatoes grow along the south fence where the sun is strongest. ^south",
			"",
		].join("\n"),
	);
	writeFileSync(
		path.join(vault, "Projects", "Reading list.md"),
		["# Reading list", "", "Books about sailing and the open sea, to read by the fire this winter.", ""].join("\n"),
	);
}

export interface Line {
	id: string;
	role: "user" | "assistant";
	text: string;
}

/** A jsonl transcript (SPEC §4) of one session, dated yesterday, one minute a turn. */
export function writeTranscript(dir: string, session: string, lines: Line[]): string {
	const start = new Date(Date.now() - 24 * 3600 * 1000);
	start.setHours(10, 0, 0, 0);
	const pad = (n: number) => String(n).padStart(2, "0");
	const stamp = (d: Date) =>
		`${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
	const rows = lines.map((line, i) =>
		JSON.stringify({
			session,
			id: line.id,
			time: stamp(new Date(start.getTime() + i * 60_000)),
			speaker: line.role === "user" ? "Alice" : "assistant",
			role: line.role,
			text: line.text,
		}),
	);
	const file = path.join(dir, `${session}.jsonl`);
	writeFileSync(file, rows.join("\n") + "\n");
	return file;
}

export const GARDEN_CHAT: Line[] = [
	{ id: "m-1", role: "user", text: "I prefer heirloom tomatoes over hybrid ones for the Garden plan." },
	{ id: "m-2", role: "assistant", text: "Noted, heirloom tomatoes it is." },
	{ id: "m-3", role: "user", text: "My sister Maria lives in Lisbon and visits every August." },
	{ id: "m-4", role: "user", text: "I always water the garden before seven in the morning." },
];

export interface Daemon {
	vault: string;
	url: string;
	token: string;
}

/** Makes the plugin's token and starts the daemon; its URL is read from the discovery file. */
export function startDaemon(cli: string, vault: string): Daemon {
	const made = vaultmem(cli, vault, ["obsidian", "token", "--json"]);
	const started = vaultmem(cli, vault, ["daemon", "start", "--json"]);
	if (!started.started && !started.running) throw new Error(`daemon did not start: ${JSON.stringify(started)}`);
	const where = JSON.parse(readFileSync(path.join(vault, ".vaultmem", "obsidian.json"), "utf8"));
	return { vault, url: where.url, token: made.token };
}

export function stopDaemon(cli: string, vault: string): void {
	try {
		vaultmem(cli, vault, ["daemon", "stop", "--json"]);
	} catch (error) {
		console.error(String(error));
	}
}

/** Polls `check` until it returns a value, or fails after `seconds` (the model's first load). */
export async function waitFor<T>(what: string, seconds: number, check: () => Promise<T | null>): Promise<T> {
	const deadline = Date.now() + seconds * 1000;
	let last: unknown = null;
	while (Date.now() < deadline) {
		try {
			const value = await check();
			if (value !== null) return value;
		} catch (error) {
			last = error;
		}
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
	throw new Error(`timed out after ${seconds} s waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}
