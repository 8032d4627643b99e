// The review pane: the memories written since a day, by the session they came from, each with
// the turn it was said in, and the person's answers: accept, edit, correct, forget, roll back.
import { ItemView, Notice, WorkspaceLeaf } from "obsidian";
import { safely } from "./guard";
import type { PluginHost } from "./host";
import { ConfirmModal, CorrectModal } from "./modals";
import { defaultSince, localIso } from "./present";
import { ReviewModel, type ActionReport } from "./review-model";
import { remember } from "./settings";
import type { ReviewMemory, ReviewResult, ReviewSession } from "./types";

export const REVIEW_VIEW = "vaultmem-review";

export class ReviewView extends ItemView {
	private readonly model: ReviewModel;
	private since: string;
	private listEl!: HTMLElement;
	private dateEl!: HTMLInputElement;
	private loading = false;

	constructor(
		leaf: WorkspaceLeaf,
		private readonly host: PluginHost,
	) {
		super(leaf);
		this.model = new ReviewModel(host.client, {
			has: (id) => host.data.accepted.includes(id),
			add: (id) => {
				host.data.accepted = remember(host.data.accepted, id);
				void host.saveSettings();
			},
		});
		this.since = defaultSince(host.data.lastReviewed, new Date());
	}

	getViewType(): string {
		return REVIEW_VIEW;
	}

	getDisplayText(): string {
		return "vaultmem review";
	}

	getIcon(): string {
		return "list-checks";
	}

	async onOpen(): Promise<void> {
		const root = this.contentEl;
		root.empty();
		root.addClass("vaultmem-pane", "vaultmem-review");
		root.createEl("h4", { text: "New memories", cls: "vaultmem-pane-title" });
		const bar = root.createDiv({ cls: "vaultmem-toolbar" });
		bar.createEl("label", { text: "Since", attr: { for: "vaultmem-since" } });
		this.dateEl = bar.createEl("input", { type: "date", attr: { id: "vaultmem-since" } });
		this.dateEl.value = this.since.slice(0, 10);
		this.dateEl.addEventListener("change", () =>
			safely("review", () => {
				if (!this.dateEl.value) return;
				this.since = `${this.dateEl.value}T00:00:00`;
				return this.reload();
			}),
		);
		const refresh = bar.createEl("button", { text: "Refresh", cls: "vaultmem-refresh" });
		refresh.addEventListener("click", () => safely("review", () => this.reload()));
		this.listEl = root.createDiv({ cls: "vaultmem-list" });
		await this.reload(true);
	}

	async onClose(): Promise<void> {
		this.contentEl.empty();
	}

	/** Asks the daemon again and redraws; `looking` records this as the person's last look. */
	async reload(looking = false): Promise<void> {
		if (this.loading) return;
		this.loading = true;
		try {
			this.message("Loading…");
			const outcome = await this.model.load(this.since);
			if (outcome.kind !== "ok") {
				this.message(outcome.message, outcome.kind);
				return;
			}
			this.render(outcome.value);
			if (looking) {
				this.host.data.lastReviewed = localIso(new Date());
				await this.host.saveSettings();
			}
		} finally {
			this.loading = false;
		}
	}

	private message(text: string, kind = "info"): void {
		this.listEl.empty();
		this.listEl.createDiv({ cls: `vaultmem-message vaultmem-message-${kind}`, text });
	}

	private render(result: ReviewResult): void {
		this.listEl.empty();
		const sessions = result.sessions.length;
		this.listEl.createDiv({
			cls: "vaultmem-summary",
			text:
				result.count === 0
					? `Nothing new since ${result.since.slice(0, 10)}.`
					: `${result.count} memor${result.count === 1 ? "y" : "ies"} from ${sessions} session${sessions === 1 ? "" : "s"} since ${result.since.slice(0, 10)}`,
		});
		for (const session of result.sessions) this.renderSession(session);
	}

	private renderSession(session: ReviewSession): void {
		const group = this.listEl.createDiv({ cls: "vaultmem-session" });
		const head = group.createDiv({ cls: "vaultmem-session-head" });
		const title = head.createEl("a", { text: session.title || "Added by hand", cls: "vaultmem-session-title" });
		if (session.session) {
			const path = session.session;
			title.addEventListener("click", () => this.host.open(path.replace(/\.md$/, "")));
		}
		if (session.date) head.createSpan({ cls: "vaultmem-muted", text: session.date });
		for (const run of session.runs) {
			const runRow = group.createDiv({ cls: "vaultmem-run" });
			runRow.createEl("code", { text: run, cls: "vaultmem-run-id" });
			const undo = runRow.createEl("button", { text: "Roll back this run", cls: "vaultmem-rollback mod-warning" });
			const count = session.memories.filter((memory) => memory.run === run).length;
			undo.addEventListener("click", () =>
				new ConfirmModal(
					this.app,
					"Roll back this run?",
					`Every note written by ${run} (${count} memor${count === 1 ? "y" : "ies"} listed here) is undone in one git commit.`,
					"Roll back",
					() => safely("roll back", () => this.act(this.model.rollbackRun(run))),
				).open(),
			);
		}
		for (const memory of session.memories) this.renderMemory(group, memory);
	}

	private renderMemory(group: HTMLElement, memory: ReviewMemory): void {
		const accepted = this.model.isAccepted(memory);
		const card = group.createDiv({ cls: "vaultmem-card", attr: { "data-id": memory.id } });
		if (accepted) card.addClass("is-accepted");
		const head = card.createDiv({ cls: "vaultmem-card-head" });
		head.createSpan({ cls: `vaultmem-badge vaultmem-type-${memory.type}`, text: memory.type });
		if (accepted) head.createSpan({ cls: "vaultmem-muted", text: "accepted" });
		card.createDiv({ cls: "vaultmem-card-text", text: memory.text });
		if (memory.turn) {
			const turn = memory.turn;
			const quote = card.createEl("blockquote", { cls: "vaultmem-turn", attr: { title: `Open ${turn.link}` } });
			quote.createSpan({ cls: "vaultmem-speaker", text: `${turn.speaker}: ` });
			quote.createSpan({ text: turn.text });
			if (turn.time) quote.createSpan({ cls: "vaultmem-muted vaultmem-turn-time", text: ` · ${turn.time}` });
			quote.addEventListener("click", () => this.host.open(turn.link));
		}
		const buttons = card.createDiv({ cls: "vaultmem-actions" });
		const button = (label: string, cls: string, action: () => void) => {
			const el = buttons.createEl("button", { text: label, cls: `vaultmem-${cls}` });
			el.addEventListener("click", () => safely(label.toLowerCase(), action));
		};
		if (!accepted) {
			button("Accept", "accept", () => {
				this.report(this.model.accept(memory));
				return this.reload();
			});
		}
		button("Edit", "edit", () => this.host.open(memory.path.replace(/\.md$/, "")));
		button("Correct", "correct", () =>
			new CorrectModal(this.app, memory.text, (text) =>
				safely("correct", () => this.act(this.model.correct(memory, text))),
			).open(),
		);
		button("Forget", "forget", () =>
			new ConfirmModal(
				this.app,
				"Forget this memory?",
				`“${memory.title}” moves to the archive (out of search, kept in git history).`,
				"Forget",
				() => safely("forget", () => this.act(this.model.forget(memory))),
			).open(),
		);
	}

	private async act(pending: Promise<ActionReport>): Promise<void> {
		this.report(await pending);
		await this.reload();
	}

	private report(report: ActionReport): void {
		new Notice(report.message, report.ok ? 6000 : 10000);
	}
}
