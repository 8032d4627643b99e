// The review pane's logic: what to list, and what each button does through the daemon.
// Accept is local (the memory stays as it is; the pane only stops asking about it).
import type { DaemonClient, Outcome } from "./api";
import { shortSha } from "./present";
import type { ReviewMemory, ReviewResult } from "./types";

export interface ActionReport {
	ok: boolean;
	/** The Notice text: the outcome, e.g. the commit's short sha, or why it failed. */
	message: string;
}

/** The ids the person accepted, kept in plugin data. */
export interface AcceptedStore {
	has(id: string): boolean;
	add(id: string): void;
}

export class ReviewModel {
	constructor(
		private readonly client: DaemonClient,
		private readonly accepted: AcceptedStore,
	) {}

	load(since: string): Promise<Outcome<ReviewResult>> {
		return this.client.review(since);
	}

	isAccepted(memory: Pick<ReviewMemory, "id">): boolean {
		return this.accepted.has(memory.id);
	}

	accept(memory: Pick<ReviewMemory, "id" | "title">): ActionReport {
		this.accepted.add(memory.id);
		return { ok: true, message: `Accepted “${memory.title}” — kept as it is` };
	}

	async forget(memory: Pick<ReviewMemory, "id" | "title">): Promise<ActionReport> {
		const outcome = await this.client.forget(memory.id);
		if (outcome.kind !== "ok") return failed("forget", memory.title, outcome.message);
		const result = outcome.value;
		return {
			ok: true,
			message: `Forgot “${memory.title}” — moved to ${result.note}${commitNote(result.commit)}`,
		};
	}

	async correct(memory: Pick<ReviewMemory, "id" | "title">, text: string): Promise<ActionReport> {
		const corrected = text.trim();
		if (!corrected) return { ok: false, message: "Write the corrected statement first" };
		const outcome = await this.client.correct(memory.id, corrected);
		if (outcome.kind !== "ok") return failed("correct", memory.title, outcome.message);
		return { ok: true, message: `Corrected “${memory.title}” — ${outcome.value.action}: ${outcome.value.path}` };
	}

	async rollbackRun(run: string): Promise<ActionReport> {
		const outcome = await this.client.rollbackRun(run);
		if (outcome.kind !== "ok") return failed("roll back", run, outcome.message);
		const result = outcome.value;
		const removed = result.removed?.length ?? 0;
		const restored = result.restored?.length ?? 0;
		return {
			ok: true,
			message: `Rolled back ${run}: ${removed} note(s) removed, ${restored} restored${commitNote(result.commit)}`,
		};
	}
}

function commitNote(commit: string | null | undefined): string {
	return commit ? ` (commit ${shortSha(commit)})` : "";
}

function failed(verb: string, what: string, why: string): ActionReport {
	return { ok: false, message: `Could not ${verb} “${what}”: ${why}` };
}
