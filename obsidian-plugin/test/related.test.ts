// The related pane's logic against the real daemon: the memory that mentions the open note
// first, with why, date and source; never the note itself; a new note, new rows.
import { describe, expect, test } from "vitest";
import { RelatedModel } from "../src/related-model";
import { clientFor, shared } from "./support/client";

const daemon = shared();

describe.skipIf(!!daemon.skip)("related", () => {
	const model = () => new RelatedModel(clientFor(daemon.vault, daemon.token), () => 8);

	test("the memory that mentions the open note comes first, with why, date and source", async () => {
		const outcome = await model().rowsFor("Projects/Garden plan.md");
		if (outcome?.kind !== "ok") throw new Error(`related failed: ${JSON.stringify(outcome)}`);
		const [first] = outcome.value;
		expect(first).toMatchObject({
			title: "Alice prefers heirloom tomatoes over hybrid ones",
			type: "preference",
			why: "links to this note",
			open: "Memory/Preferences/Alice prefers heirloom tomatoes over hybrid ones",
		});
		expect(first?.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
		expect(first?.source).toMatch(/garden-chat#\^m-1$/);
		expect(first?.sourceLink).toMatch(/^(Memory\/)?Sessions\/.*garden-chat#\^m-1$/);
		expect(outcome.value.some((row) => row.open.startsWith("Projects/Garden plan") || row.open.startsWith("Garden plan"))).toBe(false);
		for (const row of outcome.value.slice(1)) {
			if (row.why !== "links to this note") expect(row.why).toMatch(/^similar \d\.\d\d$/);
		}
	});

	test("moving to another note gives that note's rows", async () => {
		const related = model();
		const garden = await related.rowsFor("Projects/Garden plan.md");
		const reading = await related.rowsFor("Projects/Reading list.md");
		if (garden?.kind !== "ok" || reading?.kind !== "ok") throw new Error(JSON.stringify([garden, reading]));
		expect(reading.value.map((r) => r.title)).not.toContain("Reading list");
		expect(reading.value.find((r) => r.why === "links to this note")).toBeUndefined();
		expect(reading.value.map((r) => r.title)).not.toEqual(garden.value.map((r) => r.title));
	});

	test("only the newest note's answer is drawn when the person moves quickly", async () => {
		const related = model();
		const first = related.rowsFor("Projects/Reading list.md");
		const second = related.rowsFor("Projects/Garden plan.md");
		expect(await first).toBeNull();
		const latest = await second;
		if (latest?.kind !== "ok") throw new Error(JSON.stringify(latest));
		expect(latest.value[0]?.why).toBe("links to this note");
	});

	test("a note that is not in the vault is the daemon's explained refusal", async () => {
		const outcome = await model().rowsFor("Projects/Nope.md");
		expect(outcome?.kind).toBe("error");
	});
});
