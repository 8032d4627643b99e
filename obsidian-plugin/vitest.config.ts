import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
	resolve: {
		// the obsidian package is types only; Obsidian supplies the module at runtime
		alias: { obsidian: path.resolve(import.meta.dirname, "test/mocks/obsidian.ts") },
	},
	test: {
		include: ["test/**/*.test.ts"],
		globalSetup: ["test/global-setup.ts"],
		// one daemon serves every suite, and the box has two cores
		fileParallelism: false,
		testTimeout: 60_000,
		hookTimeout: 180_000,
		// expect.poll waits for a pane to redraw; a deadline, not a timing assertion
		expect: { poll: { timeout: 30_000, interval: 100 } },
	},
});
