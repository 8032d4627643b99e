// The one HTTP edge the tests stand in for: Obsidian's `requestUrl` is Electron's, so in Node
// (vitest) and behind the browser harness (Playwright's exposeFunction) requests go out
// through node:http instead. Same semantics: no CORS, the body read whatever the status, and
// a rejection when nothing listens.
import http from "node:http";

export interface BridgeRequest {
	url: string;
	method?: string;
	contentType?: string;
	body?: string;
	headers?: Record<string, string>;
}

export interface BridgeResponse {
	status: number;
	headers: Record<string, string>;
	text: string;
}

export function send(request: BridgeRequest): Promise<BridgeResponse> {
	return new Promise((resolve, reject) => {
		const url = new URL(request.url);
		const body = request.body ?? "";
		const headers: Record<string, string> = { ...(request.headers ?? {}) };
		if (request.contentType) headers["Content-Type"] = request.contentType;
		headers["Content-Length"] = String(Buffer.byteLength(body));
		const outgoing = http.request(
			{ hostname: url.hostname, port: url.port, path: url.pathname + url.search, method: request.method ?? "GET", headers, agent: false },
			(incoming) => {
				const chunks: Buffer[] = [];
				incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
				incoming.on("end", () => {
					const flat: Record<string, string> = {};
					for (const [key, value] of Object.entries(incoming.headers)) {
						if (value !== undefined) flat[key] = Array.isArray(value) ? value.join(", ") : value;
					}
					resolve({ status: incoming.statusCode ?? 0, headers: flat, text: Buffer.concat(chunks).toString("utf8") });
				});
				incoming.on("error", reject);
			},
		);
		outgoing.on("error", (error) => reject(new Error(`net::ERR_CONNECTION_REFUSED (${error.message})`)));
		outgoing.end(body);
	});
}
