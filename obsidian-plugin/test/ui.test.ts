// The built main.js in headless Chromium, with the harness standing in for Obsidian and its
// requests going to the real daemon (the test's Node side sends them: Electron's requestUrl
// has no CORS, a page's fetch would). Drives each pane and takes the screenshots docs/ shows.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { clientFor, extract, shared } from "./support/client";
import { git, vaultmem, waitFor } from "./support/daemon";
import { send } from "./support/http";

const PLUGIN_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// Where the screenshots go: a temporary folder, so that a test run leaves the repository as
// it was; `npm run screenshots` sets VAULTMEM_SCREENSHOTS=../docs to renew the committed ones.
const DOCS = process.env.VAULTMEM_SCREENSHOTS
	? path.resolve(process.env.VAULTMEM_SCREENSHOTS)
	: mkdtempSync(path.join(os.tmpdir(), "vaultmem-plugin-screenshots-"));
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const daemon = shared();
const skip = daemon.skip || (existsSync(CHROMIUM) ? "" : `obsidian-plugin UI: skipped — ${CHROMIUM} not found (apt-get install chromium, or set CHROMIUM)`);
if (skip && !daemon.skip) console.log(skip);

const GARDEN = "Projects/Garden plan.md";
const HEIRLOOM = "Alice prefers heirloom tomatoes over hybrid ones";

function markdownFiles(root: string, dir = ""): string[] {
	const out: string[] = [];
	for (const name of readdirSync(path.join(root, dir))) {
		if (name.startsWith(".")) continue;
		const relative = dir ? `${dir}/${name}` : name;
		if (statSync(path.join(root, relative)).isDirectory()) out.push(...markdownFiles(root, relative));
		else if (name.endsWith(".md")) out.push(relative);
	}
	return out;
}

describe.skipIf(!!skip)("the built plugin in Chromium", () => {
	let browser: Browser;
	let page: Page;
	const pageErrors: string[] = [];
	let balcony: {
		run: string;
		decisions: { action: string; content: string; path: string; id: string; source_messages?: string[] }[];
	};

	const run = (id: string) => page.evaluate((command) => (window as any).app.commands.executeCommandById(command), id);
	const openNote = (file: string) =>
		page.evaluate((p) => {
			const app = (window as any).app;
			return app.workspace.openFile(app.vault.getAbstractFileByPath(p), "");
		}, file);
	const notices = () => page.evaluate(() => (window as any).harness.notices as string[]);
	/** Clicks Notices away (as a person would; they cover the top of the sidebar). */
	const dismissNotices = () => page.evaluate(() => document.querySelectorAll<HTMLElement>("#notices .notice").forEach((n) => n.click()));
	/** A screenshot for docs/; earlier Notices are dismissed unless `notices` keeps them. */
	const shot = async (name: string, notices = false) => {
		if (!notices) await dismissNotices();
		await page.screenshot({ path: path.join(DOCS, `obsidian-${name}.png`) });
	};

	beforeAll(async () => {
		// the production build, exactly what a release carries
		execFileSync(process.execPath, ["esbuild.config.mjs", "production"], { cwd: PLUGIN_DIR, stdio: "pipe" });
		balcony = extract(daemon, "balcony-chat", [
			{ id: "b-1", role: "user", text: "I grow basil and mint in clay pots on the balcony." },
			{ id: "b-2", role: "assistant", text: "Lovely, herbs like a sunny balcony." },
			{ id: "b-3", role: "user", text: "I prefer oat milk in my coffee." },
			{ id: "b-4", role: "user", text: "I cycle to work every day along the river." },
		]);
		browser = await chromium.launch({
			executablePath: CHROMIUM,
			args: [
				"--headless",
				"--no-sandbox",
				"--disable-gpu",
				"--no-first-run",
				"--disable-background-networking",
				"--disable-component-update",
				"--disable-sync",
				"--disable-quic",
			],
		});
		page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
		page.setDefaultTimeout(30_000);
		page.on("pageerror", (error) => pageErrors.push(String(error)));
		await page.exposeFunction("__vmRequest", (request: Parameters<typeof send>[0]) => send(request));
		await page.exposeFunction("__vmRead", (relative: string) => readFileSync(path.join(daemon.vault, relative), "utf8"));
		await page.goto(pathToFileURL(path.join(PLUGIN_DIR, "test/harness/index.html")).href);
		const files = markdownFiles(daemon.vault);
		await page.evaluate((paths) => (window as any).renderFiles(paths.filter((p: string) => !p.startsWith("Memory/Sessions"))), files);
		const commands = await page.evaluate((boot) => (window as any).bootPlugin(boot), {
			source: readFileSync(path.join(PLUGIN_DIR, "main.js"), "utf8"),
			manifest: JSON.parse(readFileSync(path.join(PLUGIN_DIR, "manifest.json"), "utf8")),
			basePath: daemon.vault,
			files,
			token: daemon.token,
			pluginData: null,
		});
		expect(commands.sort()).toEqual(["vaultmem:related", "vaultmem:review", "vaultmem:search", "vaultmem:status"]);
		await openNote(GARDEN);
	});

	afterAll(async () => {
		await browser?.close(); // playwright removes the profile it made
	});

	test("the status bar shows the watching daemon and its model", async () => {
		await expect.poll(() => page.locator(".vaultmem-status").textContent()).toBe("vaultmem ● watching · all-MiniLM-L6-v2");
	});

	test("the settings tab keeps the token in secret storage, as a password field", async () => {
		const settings = await page.evaluate(() => {
			const tab = (window as any).app.settingTabs[0];
			tab.display();
			const inputs = [...tab.containerEl.querySelectorAll("input")] as HTMLInputElement[];
			return {
				names: [...tab.containerEl.querySelectorAll(".setting-item-name")].map((el: any) => el.textContent),
				types: inputs.map((input) => input.type),
				token: inputs[0]?.value,
				warning: tab.containerEl.querySelector(".vaultmem-warning") !== null,
			};
		});
		expect(settings).toEqual({
			names: ["Token", "Daemon URL", "Related memories", "Connection"],
			types: ["password", "text", "number"],
			token: daemon.token,
			warning: false,
		});
		expect(await page.evaluate(() => (window as any).app.pluginData?.token)).toBeUndefined();
	});

	test("review lists the fresh extract's memories by session, with their turns", async () => {
		await run("vaultmem:review");
		const created = balcony.decisions.filter((d) => d.action === "created");
		expect(created.length).toBeGreaterThan(0);
		const session = page.locator(".vaultmem-session", { hasText: "balcony-chat" });
		await expect.poll(() => session.locator(".vaultmem-card").count()).toBe(created.length);
		const texts = await session.locator(".vaultmem-card-text").allTextContents();
		expect(texts.sort()).toEqual(created.map((d) => d.content).sort());
		await expect.poll(() => session.locator(".vaultmem-run-id").allTextContents()).toEqual([balcony.run]);
		const basil = session.locator(".vaultmem-card", { hasText: "basil" });
		expect(await basil.locator(".vaultmem-turn").textContent()).toContain("Alice: I grow basil and mint in clay pots on the balcony.");
		// the garden session is listed too, newest session first
		const titles = await page.locator(".vaultmem-session-title").allTextContents();
		expect(titles.some((t) => t.endsWith("garden-chat"))).toBe(true);
		await shot("review");

		// the quoted turn opens the session at that turn's block
		await basil.locator(".vaultmem-turn").click();
		const opened = await page.evaluate(() => (window as any).harness.opened.at(-1).linktext);
		expect(opened).toMatch(/Sessions\/.*balcony-chat#\^b-1$/);
		expect(await page.locator("#note-title").textContent()).toMatch(/balcony-chat$/);
		await openNote(GARDEN);
	});

	test("forget in the review pane archives the note, and git commits it", async () => {
		const oat = balcony.decisions.find((d) => d.content.includes("oat milk"));
		if (!oat) throw new Error(`no oat milk memory in ${JSON.stringify(balcony.decisions)}`);
		const card = page.locator(".vaultmem-card", { hasText: "oat milk" });
		await card.locator(".vaultmem-forget").click();
		await page.locator(".modal button.mod-warning", { hasText: "Forget" }).click();
		await expect.poll(notices).toContainEqual(expect.stringContaining("Forgot"));
		await expect.poll(() => card.count()).toBe(0);
		expect(existsSync(path.join(daemon.vault, oat.path))).toBe(false);
		expect(existsSync(path.join(daemon.vault, "Memory/Archive", path.basename(oat.path)))).toBe(true);
		const [sha = "", ...body] = git(daemon.vault, ["log", "-1", "--format=%H%n%B"]).split("\n");
		expect(body.join("\n")).toContain("Vaultmem-Action: forget");
		const forgot = (await notices()).find((n) => n.startsWith("Forgot"));
		expect(forgot).toContain(sha.slice(0, 7));
		await expect.poll(() => page.locator(".vaultmem-card", { hasText: "basil" }).count()).toBe(1);
	});

	test("accept stays local; correct and roll back go through the daemon", async () => {
		const requests = () => page.evaluate(() => (window as any).harness.requests.map((r: any) => r.op) as string[]);
		const basil = page.locator(".vaultmem-card", { hasText: "basil" });
		const id = await basil.getAttribute("data-id");
		const before = (await requests()).length;
		await basil.locator(".vaultmem-accept").click();
		await expect.poll(() => basil.getAttribute("class")).toContain("is-accepted");
		expect(await page.evaluate(() => (window as any).app.pluginData.accepted)).toEqual([id]);
		expect(await page.evaluate(() => (window as any).app.pluginData.lastReviewed)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
		expect((await requests()).slice(before).filter((op) => op !== "review" && op !== "status")).toEqual([]);

		// the memory of the b-4 turn ("I cycle to work…"), whatever words the extractor chose
		const commute = balcony.decisions.find((d) => d.source_messages?.includes("b-4"));
		if (!commute) throw new Error(`no memory of turn b-4 in ${JSON.stringify(balcony.decisions)}`);
		const cycle = page.locator(`.vaultmem-card[data-id="${commute.id}"]`);
		const cycleText = await cycle.locator(".vaultmem-card-text").textContent();
		await cycle.locator(".vaultmem-correct").click();
		const area = page.locator(".vaultmem-correct-text");
		expect(await area.inputValue()).toBe(cycleText);
		await area.fill("Alice cycles to work along the river, and takes the tram when it rains.");
		await page.locator(".modal button.mod-cta", { hasText: "Save correction" }).click();
		await expect.poll(notices).toContainEqual(expect.stringContaining("Corrected"));
		await expect.poll(() => page.locator(".vaultmem-card", { hasText: "takes the tram" }).count()).toBe(1);
		expect(await cycle.count()).toBe(0);
		expect(git(daemon.vault, ["log", "-1", "--format=%B"])).toContain("Vaultmem-Action: correct");

		const runRow = page.locator(".vaultmem-run", { hasText: balcony.run });
		await dismissNotices();
		await runRow.locator(".vaultmem-rollback").click();
		await page.locator(".modal button.mod-warning", { hasText: "Roll back" }).click();
		await expect.poll(notices).toContainEqual(expect.stringContaining(`Rolled back ${balcony.run}`));
		await expect.poll(() => runRow.count()).toBe(0);
		expect(git(daemon.vault, ["log", "-1", "--format=%B"])).toContain(`Vaultmem-Run: ${balcony.run}`);
		const basilNote = balcony.decisions.find((d) => d.content.includes("basil"));
		expect(basilNote && existsSync(path.join(daemon.vault, basilNote.path))).toBe(false);
	});

	test("related lists the memory that mentions the open note, and follows the person", async () => {
		await run("vaultmem:related");
		const pane = page.locator(".vaultmem-related");
		const title = pane.locator(".vaultmem-pane-title");
		await expect.poll(() => title.textContent()).toBe("Related to Garden plan");
		const heirloom = pane.locator(".vaultmem-hit", { hasText: HEIRLOOM });
		await expect.poll(() => heirloom.count()).toBe(1);
		expect(await pane.locator(".vaultmem-hit").first().locator(".vaultmem-hit-title").textContent()).toBe(HEIRLOOM);
		expect(await heirloom.locator(".vaultmem-why-label").textContent()).toBe("links to this note");
		expect(await heirloom.locator(".vaultmem-source").textContent()).toMatch(/garden-chat#\^m-1$/);

		await openNote("Projects/Reading list.md");
		await expect.poll(() => title.textContent()).toBe("Related to Reading list");
		await expect.poll(() => pane.locator(".vaultmem-message", { hasText: "Loading" }).count()).toBe(0);
		expect(await pane.locator(".vaultmem-why-label", { hasText: "links to this note" }).count()).toBe(0);

		await openNote(GARDEN);
		await expect.poll(() => heirloom.count()).toBe(1);
		await shot("related");

		await heirloom.locator(".vaultmem-hit-title").click();
		const opened = await page.evaluate(() => (window as any).harness.opened.at(-1));
		expect(opened).toEqual({ linktext: `Memory/Preferences/${HEIRLOOM}`, sourcePath: GARDEN, newLeaf: false });
		await openNote(GARDEN);
	});

	test("search from the command palette: scope toggle, and a hit opens at its heading", async () => {
		await run("vaultmem:search");
		const input = page.locator(".vaultmem-search-input");
		const results = page.locator(".vaultmem-result");
		const badges = () => results.locator(".vaultmem-badge").allTextContents();
		const lastScope = () => page.evaluate(() => (window as any).harness.requests.filter((r: any) => r.op === "search").at(-1)?.body.scope);
		await input.fill("tomatoes in the garden");
		await expect.poll(async () => new Set((await badges()).map((b) => (b === "note" ? "note" : "memory"))).size).toBe(2);
		expect(await lastScope()).toBe("all");

		await page.locator(".vaultmem-scope-button", { hasText: "memories" }).click();
		await expect.poll(lastScope).toBe("memories");
		await expect.poll(async () => (await badges()).includes("note")).toBe(false);
		expect((await badges()).length).toBeGreaterThan(0);

		await page.locator(".vaultmem-scope-button", { hasText: "notes" }).click();
		await expect.poll(lastScope).toBe("notes");
		await expect.poll(async () => (await badges()).every((b) => b === "note")).toBe(true);

		await page.locator(".vaultmem-scope-button", { hasText: "all" }).click();
		await expect.poll(async () => new Set(await badges()).size).toBeGreaterThan(1);
		await shot("search");

		await page.locator(".vaultmem-scope-button", { hasText: "notes" }).click();
		await input.fill("how much do we spend on seeds and raised beds");
		await expect.poll(() => results.first().getAttribute("data-open")).toBe("Garden plan#Budget");
		await input.press("Enter");
		await expect.poll(() => page.locator(".modal-container").count()).toBe(0);
		const opened = await page.evaluate(() => (window as any).harness.opened.at(-1));
		expect(opened).toEqual({ linktext: "Garden plan#Budget", sourcePath: "", newLeaf: false });
		expect(await page.locator("#note-body .is-target").textContent()).toBe("Budget");
	});

	test("a wrong token, then a stopped daemon: messages, not errors", async () => {
		const status = page.locator(".vaultmem-status");
		await page.evaluate(() => (window as any).app.secretStorage.setSecret("vaultmem-token", "vm_wrong-token"));
		await run("vaultmem:status");
		await expect.poll(() => status.textContent()).toBe("vaultmem ○ token refused");
		expect((await notices()).at(-1)).toContain("vaultmem obsidian token --new");
		await page.evaluate((token) => (window as any).app.secretStorage.setSecret("vaultmem-token", token), daemon.token);

		vaultmem(daemon.cli, daemon.vault, ["daemon", "stop", "--json"]);
		try {
			const message = `The vaultmem daemon is not running — run \`vaultmem daemon start\` in ${daemon.vault}`;
			await run("vaultmem:status");
			await expect.poll(() => status.textContent()).toBe("vaultmem ○ not running");
			await status.click();
			await expect.poll(async () => (await notices()).filter((n) => n === message).length).toBe(2);
			await run("vaultmem:review");
			await page.locator(".vaultmem-review .vaultmem-refresh").click();
			await expect.poll(() => page.locator(".vaultmem-review .vaultmem-message-down").textContent()).toBe(message);
			await run("vaultmem:search");
			await page.locator(".vaultmem-search-input").fill("tomatoes");
			await expect.poll(() => page.locator(".vaultmem-search .vaultmem-message-down").textContent()).toBe(message);
			await page.keyboard.press("Escape");
			await run("vaultmem:related");
			await page.locator(".vaultmem-related .vaultmem-refresh").click();
			await expect.poll(() => page.locator(".vaultmem-related .vaultmem-message-down").textContent()).toBe(message);
			await run("vaultmem:review");
			await dismissNotices();
			await status.click();
			await expect.poll(() => page.locator("#notices .notice").textContent()).toBe(message);
			await shot("status", true);
		} finally {
			vaultmem(daemon.cli, daemon.vault, ["daemon", "start", "--json"]);
			const client = clientFor(daemon.vault, daemon.token);
			await waitFor("the daemon to watch again", 170, async () => {
				const outcome = await client.status();
				return outcome.kind === "ok" && outcome.value.state === "watching" ? true : null;
			});
		}
		await run("vaultmem:status");
		await expect.poll(() => status.textContent()).toBe("vaultmem ● watching · all-MiniLM-L6-v2");
		expect((await notices()).filter((n) => n.includes("failed —"))).toEqual([]);
		expect(pageErrors).toEqual([]);
	});

	test("the four screenshots exist", () => {
		for (const name of ["review", "related", "search", "status"]) {
			expect(statSync(path.join(DOCS, `obsidian-${name}.png`)).size).toBeGreaterThan(10_000);
		}
	});
});
