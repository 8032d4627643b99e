// The status bar item: daemon up or down, index warming, model. Polled every ~10 s; when
// the daemon is down that is one local file read (or one refused connection), so cheap.
import { Notice } from "obsidian";
import type { DaemonClient } from "./api";
import { statusLine, type StatusLine } from "./present";

export const POLL_MS = 10_000;

export class StatusIndicator {
	line: StatusLine = { kind: "down", text: "vaultmem …", detail: "Checking the vaultmem daemon…" };
	private inFlight: Promise<StatusLine> | null = null;

	constructor(
		private readonly el: HTMLElement,
		private readonly client: DaemonClient,
	) {
		el.addClass("vaultmem-status");
		el.setAttr("aria-label", "vaultmem status — click for details");
		el.setText(this.line.text);
		el.addEventListener("click", () => {
			new Notice(this.line.detail, 8000);
		});
	}

	/** Asks the daemon; `announce` also shows the answer as a Notice (the status command). */
	async refresh(announce: boolean): Promise<StatusLine> {
		// one question at a time: a slow answer must not pile up polls behind it
		if (!this.inFlight) {
			this.inFlight = this.client
				.status()
				.then((outcome) => statusLine(outcome))
				.finally(() => {
					this.inFlight = null;
				});
		}
		const line = await this.inFlight;
		this.show(line);
		if (announce) new Notice(line.detail, 8000);
		return line;
	}

	private show(line: StatusLine): void {
		this.line = line;
		this.el.setText(line.text);
		this.el.setAttr("data-state", line.kind);
	}
}
