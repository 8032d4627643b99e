// The review pane's logic against the real daemon: the fresh extract's memories, grouped by
// the session they came from, each with the turn it was said in.
import { describe, expect, test } from "vitest";
import { localIso } from "../src/present";
import { ReviewModel } from "../src/review-model";
import { GARDEN_CHAT } from "./support/daemon";
import { clientFor, shared, sinceYesterday } from "./support/client";

const daemon = shared();

function localAccepted() {
	const ids = new Set<string>();
	return { ids, store: { has: (id: string) => ids.has(id), add: (id: string) => void ids.add(id) } };
}

describe.skipIf(!!daemon.skip)("review", () => {
	test("lists the fresh extract's memories under their session, with their source turns", async () => {
		const model = new ReviewModel(clientFor(daemon.vault, daemon.token), localAccepted().store);
		const outcome = await model.load(sinceYesterday());
		if (outcome.kind !== "ok") throw new Error(`review failed: ${JSON.stringify(outcome)}`);
		const garden = outcome.value.sessions.find((s) => s.title?.endsWith("garden-chat"));
		expect(garden, JSON.stringify(outcome.value.sessions.map((s) => s.title))).toBeDefined();
		if (!garden) return;
		expect(garden.session).toMatch(/^Memory\/Sessions\/.* garden-chat\.md$/);
		expect(garden.runs).toContain(daemon.run);
		// every memory note the extract wrote (the session and entity notes aside) is listed
		const written = daemon.notes.filter((note) => /^Memory\/(Facts|Preferences|Events|Procedures)\//.test(note));
		expect(garden.memories.map((m) => m.path).sort()).toEqual(written.sort());
		const userTurns = new Map(GARDEN_CHAT.filter((l) => l.role === "user").map((l) => [l.id, l.text]));
		for (const memory of garden.memories) {
			expect(memory.run).toBe(daemon.run);
			expect(memory.turn).not.toBeNull();
			const id = memory.turn?.link.split("#^")[1] ?? "";
			expect(memory.turn?.speaker).toBe("Alice");
			expect(memory.turn?.text).toBe(userTurns.get(id));
		}
		const heirloom = garden.memories.find((m) => m.type === "preference");
		expect(heirloom?.turn?.text).toBe("I prefer heirloom tomatoes over hybrid ones for the Garden plan.");
	});

	test("a day after the extract lists nothing from it", async () => {
		const model = new ReviewModel(clientFor(daemon.vault, daemon.token), localAccepted().store);
		const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
		const outcome = await model.load(`${localIso(tomorrow).slice(0, 10)}T00:00:00`);
		if (outcome.kind !== "ok") throw new Error(`review failed: ${JSON.stringify(outcome)}`);
		expect(outcome.value.count).toBe(0);
		expect(outcome.value.sessions).toEqual([]);
	});

	test("accept only marks the memory seen here: no call, the memory unchanged", async () => {
		const accepted = localAccepted();
		const model = new ReviewModel(clientFor(daemon.vault, daemon.token), accepted.store);
		const before = await model.load(sinceYesterday());
		if (before.kind !== "ok") throw new Error(JSON.stringify(before));
		const memory = before.value.sessions.flatMap((s) => s.memories)[0];
		if (!memory) throw new Error("no memory to accept");
		expect(model.isAccepted(memory)).toBe(false);
		const report = model.accept(memory);
		expect(report.ok).toBe(true);
		expect(model.isAccepted(memory)).toBe(true);
		expect([...accepted.ids]).toEqual([memory.id]);
		const after = await model.load(sinceYesterday());
		if (after.kind !== "ok") throw new Error(JSON.stringify(after));
		expect(after.value.sessions.flatMap((s) => s.memories).find((m) => m.id === memory.id)?.status).toBe("active");
	});
});
