// The related pane's logic: the hits for the open note, each with why, when and from where.
// Moving between notes quickly sends several requests; only the newest one's answer counts.
import type { DaemonClient, Outcome } from "./api";
import { linkLabel, linktextOf, openTarget } from "./links";
import { hitDate, whyLabel } from "./present";
import type { RelatedHit } from "./types";

export interface RelatedRow {
	title: string;
	type: string;
	text: string;
	why: string;
	date: string;
	/** The first source link's label ("2026-12-03 chat#^m-4"), or "" */
	source: string;
	/** The first source as link text, to open the turn. */
	sourceLink: string | null;
	/** Where clicking the row opens. */
	open: string;
}

export function relatedRow(hit: RelatedHit): RelatedRow {
	const first = hit.sources?.[0];
	return {
		title: hit.title,
		type: hit.type,
		text: hit.text,
		why: whyLabel(hit),
		date: hitDate(hit),
		source: first ? linkLabel(first) : "",
		sourceLink: first ? linktextOf(first) : null,
		open: openTarget(hit),
	};
}

export class RelatedModel {
	private latest = 0;

	constructor(
		private readonly client: DaemonClient,
		private readonly k: () => number,
	) {}

	/** The rows for `path`, or null when a newer request was made meanwhile. */
	async rowsFor(path: string): Promise<Outcome<RelatedRow[]> | null> {
		const ticket = ++this.latest;
		const outcome = await this.client.related(path, this.k());
		if (ticket !== this.latest) return null;
		if (outcome.kind !== "ok") return outcome;
		return { kind: "ok", value: outcome.value.hits.map(relatedRow) };
	}
}
