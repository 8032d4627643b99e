// The two small questions the review pane asks: "are you sure?" and "what should it say?".
import { App, Modal } from "obsidian";

export class ConfirmModal extends Modal {
	constructor(
		app: App,
		private readonly question: string,
		private readonly detail: string,
		private readonly confirmText: string,
		private readonly onConfirm: () => void,
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle(this.question);
		this.modalEl.addClass("vaultmem-modal");
		this.contentEl.createEl("p", { text: this.detail });
		const buttons = this.contentEl.createDiv({ cls: "modal-button-container" });
		buttons.createEl("button", { text: "Cancel" }).addEventListener("click", () => this.close());
		const confirm = buttons.createEl("button", { text: this.confirmText, cls: "mod-warning" });
		confirm.addEventListener("click", () => {
			this.close();
			this.onConfirm();
		});
	}

	onClose(): void {
		this.contentEl.empty();
	}
}

export class CorrectModal extends Modal {
	constructor(
		app: App,
		private readonly current: string,
		private readonly onSubmit: (text: string) => void,
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle("Correct this memory");
		this.modalEl.addClass("vaultmem-modal");
		this.contentEl.createEl("p", {
			cls: "vaultmem-muted",
			text: "The corrected statement replaces it; the old one is kept as superseded, and git records the change.",
		});
		const area = this.contentEl.createEl("textarea", { cls: "vaultmem-correct-text" });
		area.value = this.current;
		area.rows = 4;
		const buttons = this.contentEl.createDiv({ cls: "modal-button-container" });
		buttons.createEl("button", { text: "Cancel" }).addEventListener("click", () => this.close());
		const save = buttons.createEl("button", { text: "Save correction", cls: "mod-cta" });
		save.addEventListener("click", () => {
			const text = area.value.trim();
			if (!text || text === this.current.trim()) return;
			this.close();
			this.onSubmit(text);
		});
		window.setTimeout(() => area.focus(), 0);
	}

	onClose(): void {
		this.contentEl.empty();
	}
}
