// What the panes say, computed without the DOM so that it can be tested against the daemon.
import { NO_TOKEN_MESSAGE, type Outcome } from "./api";
import type { DaemonStatus, RelatedHit } from "./types";

export type StatusKind = "up" | "busy" | "down" | "unauthorized" | "error";

export interface StatusLine {
	kind: StatusKind;
	/** The status bar's text, e.g. "vaultmem ● watching · all-MiniLM-L6-v2". */
	text: string;
	/** What clicking it or the status command shows. */
	detail: string;
}

const number = new Intl.NumberFormat("en-US");

export function statusLine(outcome: Outcome<DaemonStatus>): StatusLine {
	if (outcome.kind === "down") return { kind: "down", text: "vaultmem ○ not running", detail: outcome.message };
	if (outcome.kind === "unauthorized") {
		const text = outcome.message === NO_TOKEN_MESSAGE ? "vaultmem ○ no token" : "vaultmem ○ token refused";
		return { kind: "unauthorized", text, detail: outcome.message };
	}
	if (outcome.kind === "error") return { kind: "error", text: "vaultmem ○ error", detail: outcome.message };
	const status = outcome.value;
	const model = status.model ? ` · ${status.model}` : "";
	if (status.state === "watching") {
		const indexed = status.notes_indexed != null ? `, ${number.format(status.notes_indexed)} notes indexed` : "";
		return {
			kind: "up",
			text: `vaultmem ● watching${model}`,
			detail: `The vaultmem daemon is running (${status.version ?? "?"}) for ${status.user ?? "?"}${indexed}; model ${status.model ?? "?"}.`,
		};
	}
	const progress = status.progress;
	const counted = progress ? ` ${number.format(progress[0])}/${number.format(progress[1])}` : "";
	const what = status.state === "warming" ? "warming index" : status.state;
	return {
		kind: "busy",
		text: `vaultmem ◌ ${what}${counted}`,
		detail: `The vaultmem daemon is ${what}${counted}${model ? `; model ${status.model}` : ""}${status.model_loaded === false ? " (loading)" : ""}. Answers may be partial until it is watching.`,
	};
}

/** "links to this note", or "similar 0.62". */
export function whyLabel(hit: Pick<RelatedHit, "why" | "score">): string {
	if (hit.why === "similar") return `similar ${hit.score.toFixed(2)}`;
	return hit.why;
}

/** The date a hit is about: when it was said (valid_from), else when it was written. */
export function hitDate(hit: { valid_from?: string | null; created?: string | null }): string {
	const date = hit.valid_from || hit.created || "";
	return date.slice(0, 10);
}

/** A local time without offset, as vaultmem writes them: "2026-12-04T09:30:00". */
export function localIso(date: Date): string {
	const pad = (n: number) => String(n).padStart(2, "0");
	return (
		`${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
		`T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
	);
}

/** The review's default start: when the person last looked, else seven days ago. */
export function defaultSince(lastLooked: string | null | undefined, now: Date): string {
	if (lastLooked) return lastLooked;
	const weekAgo = new Date(now.getTime() - 7 * 24 * 3600 * 1000);
	return `${localIso(weekAgo).slice(0, 10)}T00:00:00`;
}

export function shortSha(commit: string | null | undefined): string {
	return commit ? commit.slice(0, 7) : "";
}
