// `obsidian` for the Node suites: the package ships types only (Obsidian supplies the module
// at runtime), and the logic under test imports nothing from it but `requestUrl`.
import { send, type BridgeRequest } from "../support/http";

interface RequestUrlParam extends BridgeRequest {
	throw?: boolean;
}

export async function requestUrl(request: RequestUrlParam | string) {
	const param: RequestUrlParam = typeof request === "string" ? { url: request } : request;
	const response = await send(param);
	if (param.throw !== false && response.status >= 400) {
		throw new Error(`Request failed, status ${response.status}`);
	}
	return {
		status: response.status,
		headers: response.headers,
		text: response.text,
		get json() {
			return JSON.parse(response.text);
		},
		arrayBuffer: new TextEncoder().encode(response.text).buffer,
	};
}
