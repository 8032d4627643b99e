// The search modal's logic against the real daemon: the right hit, where it opens, and the
// scope toggle changing what comes back.
import { describe, expect, test } from "vitest";
import { SearchModel } from "../src/search-model";
import { clientFor, shared } from "./support/client";

const daemon = shared();

describe.skipIf(!!daemon.skip)("search", () => {
	test("a question about the person's note finds it, opening at the heading", async () => {
		const client = clientFor(daemon.vault, daemon.token);
		const raw = await client.search("how much money for seeds and raised beds", "notes");
		expect(raw.kind).toBe("ok");
		if (raw.kind !== "ok") return;
		expect(raw.value.hits[0]?.sources?.[0]).toBe("[[Garden plan#Budget]]");

		const rows = await new SearchModel(client).rows("how much money for seeds and raised beds", "notes");
		expect(rows?.kind).toBe("ok");
		if (rows?.kind !== "ok") return;
		expect(rows.value[0]).toMatchObject({ type: "note", title: "Garden plan", open: "Garden plan#Budget" });
		expect(rows.value[0]?.text).toContain("300 euros");
	});

	test("a passage that is one block with an id opens at the block", async () => {
		const rows = await new SearchModel(clientFor(daemon.vault, daemon.token)).rows("where do the tomatoes grow", "notes");
		if (rows?.kind !== "ok") throw new Error(`search failed: ${JSON.stringify(rows)}`);
		expect(rows.value[0]?.open).toBe("Garden plan#^south");
	});

	test("the scope toggle changes the results: memories, notes, all", async () => {
		const model = new SearchModel(clientFor(daemon.vault, daemon.token));
		const query = "heirloom tomatoes in the garden";
		const byScope = async (scope: "memories" | "notes" | "all") => {
			const rows = await model.rows(query, scope);
			if (rows?.kind !== "ok") throw new Error(`search ${scope} failed: ${JSON.stringify(rows)}`);
			return rows.value;
		};
		const memories = await byScope("memories");
		const notes = await byScope("notes");
		const all = await byScope("all");
		expect(memories.length).toBeGreaterThan(0);
		expect(memories.every((row) => row.type !== "note")).toBe(true);
		expect(memories.map((row) => row.title)).toContain("Alice prefers heirloom tomatoes over hybrid ones");
		// a memory opens as its own note
		expect(memories.find((row) => row.type === "preference")?.open).toBe(
			"Memory/Preferences/Alice prefers heirloom tomatoes over hybrid ones",
		);
		expect(notes.length).toBeGreaterThan(0);
		expect(notes.every((row) => row.type === "note")).toBe(true);
		const kinds = new Set(all.map((row) => (row.type === "note" ? "note" : "memory")));
		expect(kinds).toEqual(new Set(["note", "memory"]));
	});

	test("an older query's answer is dropped when a newer one was sent (typing)", async () => {
		const model = new SearchModel(clientFor(daemon.vault, daemon.token));
		const first = model.rows("tomatoes", "all");
		const second = model.rows("sister in Lisbon", "memories");
		expect(await first).toBeNull();
		const latest = await second;
		if (latest?.kind !== "ok") throw new Error(`search failed: ${JSON.stringify(latest)}`);
		expect(latest.value[0]?.title).toBe("Alice's sister Maria lives in Lisbon and visits every August");
	});
});
