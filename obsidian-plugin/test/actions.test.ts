// The review pane's answers, each through the daemon so that git records it: forget,
// correct, roll back a run. Each test extracts its own conversation, so that the shared
// garden memories stay for the other suites.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { ReviewModel } from "../src/review-model";
import type { ReviewMemory } from "../src/types";
import { git } from "./support/daemon";
import { clientFor, extract, shared, sinceYesterday } from "./support/client";

const daemon = shared();

function model() {
	return new ReviewModel(clientFor(daemon.vault, daemon.token), { has: () => false, add: () => {} });
}

async function memoriesOf(session: string): Promise<ReviewMemory[]> {
	const outcome = await model().load(sinceYesterday());
	if (outcome.kind !== "ok") throw new Error(`review failed: ${JSON.stringify(outcome)}`);
	return outcome.value.sessions.find((s) => s.title?.endsWith(session))?.memories ?? [];
}

function lastCommit(): { sha: string; body: string } {
	const [sha = "", ...body] = git(daemon.vault, ["log", "-1", "--format=%H%n%B"]).split("\n");
	return { sha, body: body.join("\n") };
}

describe.skipIf(!!daemon.skip)("review actions through the daemon", () => {
	test("forget moves the note out of the memory folder, and git commits it", async () => {
		extract(daemon, "kitchen-chat", [
			{ id: "k-1", role: "user", text: "I am allergic to peanuts, so never suggest recipes with them." },
			{ id: "k-2", role: "user", text: "My favourite kitchen knife is a Japanese santoku." },
		]);
		const memories = await memoriesOf("kitchen-chat");
		const knife = memories.find((m) => m.text.includes("santoku"));
		if (!knife) throw new Error(`no santoku memory in ${JSON.stringify(memories)}`);
		expect(existsSync(path.join(daemon.vault, knife.path))).toBe(true);

		const report = await model().forget(knife);
		expect(report.ok, report.message).toBe(true);
		expect(existsSync(path.join(daemon.vault, knife.path))).toBe(false);
		const archived = path.join(daemon.vault, "Memory", "Archive", path.basename(knife.path));
		expect(readFileSync(archived, "utf8")).toContain("status: archived");
		const commit = lastCommit();
		expect(report.message).toContain(commit.sha.slice(0, 7));
		expect(commit.body).toContain("Vaultmem-Action: forget");
		expect(git(daemon.vault, ["status", "--porcelain", "--", "Memory"])).toBe("");
		expect((await memoriesOf("kitchen-chat")).map((m) => m.id)).not.toContain(knife.id);
	});

	test("correct supersedes the memory with the new text, in one commit", async () => {
		extract(daemon, "music-chat", [{ id: "s-1", role: "user", text: "I play the cello in a community orchestra on Tuesdays." }]);
		const [cello] = (await memoriesOf("music-chat")).filter((m) => m.text.includes("cello"));
		if (!cello) throw new Error("no cello memory");
		const report = await model().correct(cello, "Alice plays the viola in a community orchestra on Thursdays.");
		expect(report.ok, report.message).toBe(true);
		expect(report.message).toContain("superseded");
		expect(readFileSync(path.join(daemon.vault, cello.path), "utf8")).toContain("status: superseded");
		expect(lastCommit().body).toContain("Vaultmem-Action: correct");
		const search = await clientFor(daemon.vault, daemon.token).search("which instrument does Alice play", "memories");
		if (search.kind !== "ok") throw new Error(JSON.stringify(search));
		const memory = search.value.hits.find((hit) => hit.type !== "session");
		expect(memory?.text).toContain("viola");
		expect(search.value.hits.some((hit) => hit.type !== "session" && hit.text.includes("cello"))).toBe(false);
	});

	test("an empty correction is refused before it reaches the daemon", async () => {
		const report = await model().correct({ id: "whatever", title: "x" }, "   ");
		expect(report).toEqual({ ok: false, message: "Write the corrected statement first" });
	});

	test("rolling back a run removes everything it wrote, in one commit", async () => {
		const run = extract(daemon, "trip-chat", [
			{ id: "t-1", role: "user", text: "I am flying to Oslo for a conference in March." },
			{ id: "t-2", role: "user", text: "I prefer aisle seats on long flights." },
		]);
		const written = (await memoriesOf("trip-chat")).map((m) => m.path);
		expect(written.length).toBeGreaterThan(0);
		const report = await model().rollbackRun(run.run);
		expect(report.ok, report.message).toBe(true);
		for (const note of written) expect(existsSync(path.join(daemon.vault, note))).toBe(false);
		const commit = lastCommit();
		expect(commit.body).toContain(`Vaultmem-Run: ${run.run}`);
		expect(report.message).toContain(commit.sha.slice(0, 7));
		expect(await memoriesOf("trip-chat")).toEqual([]);
	});

	test("forgetting a memory that is already gone reports why", async () => {
		const report = await model().forget({ id: "01NOTAMEMORYID0000000000", title: "Gone" });
		expect(report.ok).toBe(false);
		expect(report.message).toContain("Could not forget “Gone”");
	});
});
