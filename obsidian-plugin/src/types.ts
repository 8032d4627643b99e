// The daemon's answers, as `vaultmem/daemon/http_api.py` sends them (docs/obsidian.md).
// Only the fields the plugin reads are typed; the daemon may send more.

export type Scope = "memories" | "notes" | "all";

export interface DaemonStatus {
	running: boolean;
	state: "starting" | "reconciling" | "warming" | "watching" | "stopping" | string;
	model?: string;
	model_loaded?: boolean;
	version?: string;
	vault?: string;
	notes_indexed?: number;
	queue?: number;
	progress?: [number, number] | null;
	user?: string;
}

export interface Hit {
	id: string;
	path: string;
	/** fact, preference, event, procedure, entity, session, or "note" for the person's own notes */
	type: string;
	title: string;
	text: string;
	score: number;
	status?: string;
	created?: string;
	updated?: string;
	valid_from?: string | null;
	valid_to?: string | null;
	source_messages?: string[];
	/** Links such as "[[Garden plan#Budget]]": where a note passage opens, or a memory's turns. */
	sources?: string[];
}

export interface RelatedHit extends Hit {
	why: "links to this note" | "similar" | string;
}

export interface SearchResult {
	query: string;
	hits: Hit[];
}

export interface RelatedResult {
	path: string;
	hits: RelatedHit[];
}

export interface Turn {
	/** A vault link target without brackets, e.g. "Memory/Sessions/2026-12-03 chat#^m-4" */
	link: string;
	speaker: string;
	text: string;
	time?: string | null;
}

export interface ReviewMemory {
	id: string;
	path: string;
	title: string;
	type: string;
	text: string;
	status?: string;
	created?: string;
	run?: string | null;
	sources?: string[];
	turn: Turn | null;
}

export interface ReviewSession {
	/** The session note's vault path, or null for memories added by hand. */
	session: string | null;
	/** The session note's name; null for the memories added by hand. */
	title: string | null;
	date: string | null;
	runs: string[];
	memories: ReviewMemory[];
}

export interface ReviewResult {
	since: string;
	count: number;
	sessions: ReviewSession[];
}

export interface ForgetResult {
	note: string;
	from: string;
	status: string;
	commit?: string | null;
}

export interface CorrectResult {
	action: string;
	id: string;
	path: string;
	reason?: string;
}

export interface RollbackResult {
	run: string;
	undone: unknown[];
	restored?: unknown[];
	removed?: unknown[];
	commit?: string | null;
}
