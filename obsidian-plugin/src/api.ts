// DaemonClient: the one door from the plugin to the vaultmem daemon. Every call returns an
// Outcome and never throws, because a failure reaching Obsidian would break its UI; the
// panes show `outcome.message` instead.
import { requestUrl } from "obsidian";
import type {
	CorrectResult,
	DaemonStatus,
	ForgetResult,
	RelatedResult,
	ReviewResult,
	RollbackResult,
	Scope,
	SearchResult,
} from "./types";

/** Where the daemon says it listens while it serves the plugin (removed when it stops). */
export const DISCOVERY_FILE = ".vaultmem/obsidian.json";

export type Outcome<T> =
	| { kind: "ok"; value: T }
	/** No daemon: no discovery file, or nothing listening at its address. */
	| { kind: "down"; message: string }
	/** No token configured, or the daemon refused it. */
	| { kind: "unauthorized"; message: string }
	/** The daemon answered with a refusal or failure it explained. */
	| { kind: "error"; message: string; code?: string; status?: number };

export interface ClientOptions {
	/** Reads a vault-relative file (Obsidian: `app.vault.adapter.read`). */
	readVaultFile: (path: string) => Promise<string>;
	/** The token, read fresh for each call so a newly pasted one takes effect at once. */
	token: () => string | null | undefined;
	/** A settings override of the daemon's URL; empty means "read the discovery file". */
	urlOverride?: () => string | null | undefined;
	/** The vault folder, named in the "not running" message. */
	vaultPath?: string | null;
}

export function notRunningMessage(vaultPath?: string | null): string {
	const where = vaultPath ? ` in ${vaultPath}` : " in this vault";
	return `The vaultmem daemon is not running — run \`vaultmem daemon start\`${where}`;
}

export const NO_TOKEN_MESSAGE =
	"No vaultmem token yet — run `vaultmem obsidian token` in the vault and paste it in Settings → vaultmem";

export const REFUSED_TOKEN_MESSAGE =
	"token refused — run `vaultmem obsidian token --new` and paste it in Settings → vaultmem";

export class DaemonClient {
	constructor(private readonly options: ClientOptions) {}

	status(): Promise<Outcome<DaemonStatus>> {
		return this.call("status", {});
	}

	search(query: string, scope: Scope = "all", k = 10): Promise<Outcome<SearchResult>> {
		return this.call("search", { query, scope, k });
	}

	review(since?: string): Promise<Outcome<ReviewResult>> {
		return this.call("review", since ? { since } : {});
	}

	related(path: string, k = 8): Promise<Outcome<RelatedResult>> {
		return this.call("related", { path, k });
	}

	forget(ref: string): Promise<Outcome<ForgetResult>> {
		return this.call("forget", { ref });
	}

	correct(ref: string, text: string): Promise<Outcome<CorrectResult>> {
		return this.call("correct", { ref, text });
	}

	rollbackRun(run: string): Promise<Outcome<RollbackResult>> {
		return this.call("rollback", { run });
	}

	/** The daemon's base URL: the override, else the discovery file; null when neither. */
	async locate(): Promise<string | null> {
		const override = (this.options.urlOverride?.() ?? "").trim();
		if (override) return override.replace(/\/+$/, "");
		let raw: string;
		try {
			raw = await this.options.readVaultFile(DISCOVERY_FILE);
		} catch {
			return null; // no file: the daemon is not serving the plugin
		}
		try {
			const where = JSON.parse(raw) as { url?: unknown; port?: unknown };
			if (typeof where.url === "string" && where.url) return where.url.replace(/\/+$/, "");
			if (typeof where.port === "number") return `http://127.0.0.1:${where.port}`;
		} catch {
			// a half-written file reads as "not running"; the next poll sees the whole one
		}
		return null;
	}

	/** POST {url}/v1/{op} with the token; any failure becomes an Outcome. */
	async call<T>(op: string, args: Record<string, unknown>): Promise<Outcome<T>> {
		const token = (this.options.token() ?? "").trim();
		if (!token) return { kind: "unauthorized", message: NO_TOKEN_MESSAGE };
		const url = await this.locate();
		if (!url) return { kind: "down", message: notRunningMessage(this.options.vaultPath) };
		let status: number;
		let text: string;
		try {
			const response = await requestUrl({
				url: `${url}/v1/${op}`,
				method: "POST",
				contentType: "application/json",
				headers: { Authorization: `Bearer ${token}` },
				body: JSON.stringify(args),
				throw: false,
			});
			status = response.status;
			text = response.text;
		} catch {
			// requestUrl rejects when nothing listens (a stopped or killed daemon)
			return { kind: "down", message: notRunningMessage(this.options.vaultPath) };
		}
		return readAnswer<T>(status, text);
	}
}

/** The daemon's JSON answer, whatever the HTTP status, as an Outcome. */
export function readAnswer<T>(status: number, text: string): Outcome<T> {
	let body: { ok?: unknown; result?: unknown; error?: unknown; code?: unknown };
	try {
		body = JSON.parse(text);
	} catch {
		return {
			kind: "error",
			status,
			message: `the vaultmem daemon sent an answer that is not JSON (HTTP ${status}) — is another program on its port?`,
		};
	}
	if (body && body.ok === true) return { kind: "ok", value: body.result as T };
	const code = typeof body?.code === "string" ? body.code : undefined;
	const message = typeof body?.error === "string" ? body.error : `the vaultmem daemon answered HTTP ${status}`;
	if (status === 401 || code === "unauthorized") return { kind: "unauthorized", message: REFUSED_TOKEN_MESSAGE };
	return { kind: "error", message, code, status };
}
