// "vaultmem: search memory": a query box, the scope as a toggle (memories / notes / all), and
// hits that open at their heading or block. Keys: ↑/↓ to move, Enter to open.
import { Modal } from "obsidian";
import { debounced, safely } from "./guard";
import type { PluginHost } from "./host";
import { SCOPES, SearchModel, type SearchRow } from "./search-model";
import type { Scope } from "./types";

const TYPE_MS = 250;

export class SearchModal extends Modal {
	private readonly model: SearchModel;
	private inputEl!: HTMLInputElement;
	private resultsEl!: HTMLElement;
	private scopeButtons = new Map<Scope, HTMLButtonElement>();
	private rows: SearchRow[] = [];
	private selected = 0;
	/** The query the rows answer (Enter right after typing must not open a stale row). */
	private answered: string | null = null;
	private readonly typed = debounced(TYPE_MS, () => safely("search", () => this.run()));

	constructor(private readonly host: PluginHost) {
		super(host.app);
		this.model = new SearchModel(host.client);
	}

	onOpen(): void {
		this.modalEl.addClass("vaultmem-modal", "vaultmem-search");
		this.setTitle("Search memory");
		this.inputEl = this.contentEl.createEl("input", {
			type: "text",
			cls: "vaultmem-search-input",
			attr: { placeholder: "What do you want to recall?" },
		});
		const toggle = this.contentEl.createDiv({ cls: "vaultmem-scope", attr: { role: "group", "aria-label": "Scope" } });
		for (const scope of SCOPES) {
			const button = toggle.createEl("button", { text: scope, cls: "vaultmem-scope-button", attr: { "data-scope": scope } });
			button.addEventListener("click", () => safely("search", () => this.setScope(scope)));
			this.scopeButtons.set(scope, button);
		}
		this.markScope();
		this.resultsEl = this.contentEl.createDiv({ cls: "vaultmem-results" });
		this.inputEl.addEventListener("input", () => this.typed());
		this.inputEl.addEventListener("keydown", (event) => safely("search", () => this.key(event)));
		this.inputEl.focus();
	}

	onClose(): void {
		this.typed.cancel();
		this.contentEl.empty();
	}

	private async setScope(scope: Scope): Promise<void> {
		this.host.data.searchScope = scope;
		this.markScope();
		void this.host.saveSettings();
		await this.run();
	}

	private markScope(): void {
		for (const [scope, button] of this.scopeButtons) {
			const on = scope === this.host.data.searchScope;
			button.toggleClass("is-active", on);
			button.setAttr("aria-pressed", on ? "true" : "false");
		}
	}

	private async run(): Promise<void> {
		const query = this.inputEl.value;
		const outcome = await this.model.rows(query, this.host.data.searchScope);
		if (outcome === null) return;
		this.answered = query;
		this.resultsEl.empty();
		if (outcome.kind !== "ok") {
			this.rows = [];
			this.resultsEl.createDiv({ cls: `vaultmem-message vaultmem-message-${outcome.kind}`, text: outcome.message });
			return;
		}
		this.rows = outcome.value;
		this.selected = 0;
		if (this.rows.length === 0 && this.inputEl.value.trim()) {
			this.resultsEl.createDiv({ cls: "vaultmem-message", text: `No ${this.host.data.searchScope === "all" ? "hits" : this.host.data.searchScope} match.` });
		}
		this.rows.forEach((row, index) => {
			const item = this.resultsEl.createDiv({ cls: "vaultmem-result", attr: { "data-open": row.open } });
			const head = item.createDiv({ cls: "vaultmem-card-head" });
			head.createSpan({ cls: `vaultmem-badge vaultmem-type-${row.type}`, text: row.type });
			head.createSpan({ cls: "vaultmem-hit-title", text: row.title });
			head.createSpan({ cls: "vaultmem-score", text: row.score });
			item.createDiv({ cls: "vaultmem-card-text", text: row.text });
			item.addEventListener("click", () => this.choose(index));
			item.addEventListener("mousemove", () => this.select(index));
		});
		this.select(0);
	}

	private async key(event: KeyboardEvent): Promise<void> {
		if (event.key === "ArrowDown" || event.key === "ArrowUp") {
			event.preventDefault();
			const step = event.key === "ArrowDown" ? 1 : -1;
			this.select(Math.max(0, Math.min(this.rows.length - 1, this.selected + step)));
		} else if (event.key === "Enter") {
			event.preventDefault();
			if (this.answered !== this.inputEl.value) {
				this.typed.cancel();
				await this.run();
			}
			this.choose(this.selected);
		}
	}

	private select(index: number): void {
		this.selected = index;
		Array.from(this.resultsEl.children).forEach((el, i) => el.toggleClass("is-selected", i === index));
	}

	private choose(index: number): void {
		const row = this.rows[index];
		if (!row) return;
		this.close();
		this.host.open(row.open);
	}
}
