// The search modal's logic: a query and a scope in, rows that know where they open out.
import type { DaemonClient, Outcome } from "./api";
import { openTarget } from "./links";
import type { Hit, Scope } from "./types";

export const SCOPES: Scope[] = ["memories", "notes", "all"];

export interface SearchRow {
	title: string;
	/** The badge: the memory's type, or "note" for the person's own notes. */
	type: string;
	text: string;
	score: string;
	open: string;
}

export function searchRow(hit: Hit): SearchRow {
	return { title: hit.title, type: hit.type, text: hit.text, score: hit.score.toFixed(2), open: openTarget(hit) };
}

export class SearchModel {
	private latest = 0;

	constructor(private readonly client: DaemonClient) {}

	/** The rows for a query, or null when a newer query was sent meanwhile (typing). */
	async rows(query: string, scope: Scope): Promise<Outcome<SearchRow[]> | null> {
		const ticket = ++this.latest;
		if (!query.trim()) return { kind: "ok", value: [] };
		const outcome = await this.client.search(query.trim(), scope);
		if (ticket !== this.latest) return null;
		if (outcome.kind !== "ok") return outcome;
		return { kind: "ok", value: outcome.value.hits.map(searchRow) };
	}
}
