// A last net under every event handler: the client never throws, but a rendering slip must
// still not surface in Obsidian as an uncaught error. It becomes a Notice instead.
import { Notice } from "obsidian";

export function safely(what: string, action: () => unknown): void {
	try {
		const result = action();
		if (result instanceof Promise) result.catch((error: unknown) => report(what, error));
	} catch (error) {
		report(what, error);
	}
}

function report(what: string, error: unknown): void {
	console.error(`vaultmem: ${what} failed`, error);
	new Notice(`vaultmem: ${what} failed — ${error instanceof Error ? error.message : String(error)}`);
}

/** Calls `action` once calls stop arriving for `wait` ms (moving between notes quickly). */
export function debounced(wait: number, action: () => void): { (): void; cancel(): void } {
	let timer: number | null = null;
	const run = () => {
		if (timer !== null) window.clearTimeout(timer);
		timer = window.setTimeout(() => {
			timer = null;
			action();
		}, wait);
	};
	run.cancel = () => {
		if (timer !== null) window.clearTimeout(timer);
		timer = null;
	};
	return run;
}
