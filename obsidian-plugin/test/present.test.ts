// What the panes say and where links open: plain functions, no daemon needed.
import { describe, expect, test } from "vitest";
import { linkLabel, linktextOf, openTarget } from "../src/links";
import { NO_TOKEN_MESSAGE } from "../src/api";
import { defaultSince, localIso, statusLine, whyLabel } from "../src/present";

describe("links", () => {
	test("the inside of a wiki link, alias dropped", () => {
		expect(linktextOf("[[Garden plan#Budget]]")).toBe("Garden plan#Budget");
		expect(linktextOf("[[Garden plan#^south|the fence]]")).toBe("Garden plan#^south");
		expect(linktextOf("Memory/Sessions/2026-12-03 chat#^m-4")).toBe("Memory/Sessions/2026-12-03 chat#^m-4");
		expect(linkLabel("[[Sessions/2026-12-03 chat#^m-4]]")).toBe("2026-12-03 chat#^m-4");
	});

	test("a note passage opens at its source, a memory as its own note", () => {
		expect(openTarget({ type: "note", path: "Projects/Garden plan.md", sources: ["[[Garden plan#Budget]]"] })).toBe("Garden plan#Budget");
		expect(openTarget({ type: "fact", path: "Memory/Facts/Tea.md", sources: ["[[Sessions/x#^m-1]]"] })).toBe("Memory/Facts/Tea");
		expect(openTarget({ type: "note", path: "Projects/Plain.md", sources: [] })).toBe("Projects/Plain");
	});
});

describe("present", () => {
	test("warming shows its progress with thousands separated", () => {
		const line = statusLine({ kind: "ok", value: { running: true, state: "warming", progress: [1200, 4000], model: "m" } });
		expect(line).toMatchObject({ kind: "busy", text: "vaultmem ◌ warming index 1,200/4,000" });
	});

	test("a refused token says which command makes a new one", () => {
		const line = statusLine({ kind: "unauthorized", message: "token refused — run `vaultmem obsidian token --new` and paste it in Settings → vaultmem" });
		expect(line.text).toBe("vaultmem ○ token refused");
		expect(line.detail).toContain("vaultmem obsidian token --new");
	});

	test("no token yet says how to make one", () => {
		const line = statusLine({ kind: "unauthorized", message: NO_TOKEN_MESSAGE });
		expect(line.text).toBe("vaultmem ○ no token");
		expect(line.detail).toContain("vaultmem obsidian token");
	});

	test("why a hit is related", () => {
		expect(whyLabel({ why: "similar", score: 0.6234 })).toBe("similar 0.62");
		expect(whyLabel({ why: "links to this note", score: 0.9 })).toBe("links to this note");
	});

	test("the review starts where the person last looked, else a week back", () => {
		expect(defaultSince("2026-12-01T08:00:00", new Date(2026, 11, 4))).toBe("2026-12-01T08:00:00");
		expect(defaultSince(null, new Date(2026, 11, 4, 15, 30))).toBe("2026-11-27T00:00:00");
		expect(localIso(new Date(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02T03:04:05");
	});
});
