// The slice of Obsidian's API that vaultmem's main.js uses, for loading the built plugin in
// headless Chromium. Obsidian itself is the only part stood in for: requests leave through
// `window.__vmRequest` (the test's Node side, to the real daemon) and vault files are read
// through `window.__vmRead`. Everything the plugin does is recorded on `window.harness`.
(function () {
	"use strict";

	const harness = (window.harness = {
		requests: [], // {op, body, status}
		opened: [], // link texts given to openLinkText
		notices: [], // Notice texts
		saved: [], // plugin data saved
	});

	// --- Obsidian's DOM helpers (obsidian.d.ts "declare global") ---------------------------
	function apply(el, info) {
		if (info == null) return;
		if (typeof info === "string") {
			el.className = info;
			return;
		}
		if (info.cls) el.className = Array.isArray(info.cls) ? info.cls.join(" ") : info.cls;
		if (info.text != null) {
			if (info.text instanceof Node) el.appendChild(info.text);
			else el.textContent = String(info.text);
		}
		if (info.attr) {
			for (const [key, value] of Object.entries(info.attr)) {
				if (value === null || value === false) el.removeAttribute(key);
				else el.setAttribute(key, String(value));
			}
		}
		for (const key of ["title", "type", "placeholder", "href", "value"]) {
			if (info[key] !== undefined) el[key] = info[key];
		}
	}
	Node.prototype.createEl = function (tag, info, callback) {
		const el = document.createElement(tag);
		apply(el, info);
		this.appendChild(el);
		if (callback) callback(el);
		return el;
	};
	Node.prototype.createDiv = function (info, callback) {
		return this.createEl("div", info, callback);
	};
	Node.prototype.createSpan = function (info, callback) {
		return this.createEl("span", info, callback);
	};
	Node.prototype.empty = function () {
		while (this.firstChild) this.removeChild(this.firstChild);
	};
	Node.prototype.setText = function (text) {
		this.textContent = String(text);
	};
	Element.prototype.addClass = function (...classes) {
		this.classList.add(...classes.flatMap((c) => c.split(" ")).filter(Boolean));
	};
	Element.prototype.removeClass = function (...classes) {
		this.classList.remove(...classes);
	};
	Element.prototype.toggleClass = function (classes, value) {
		for (const c of [].concat(classes)) this.classList.toggle(c, value);
	};
	Element.prototype.hasClass = function (c) {
		return this.classList.contains(c);
	};
	Element.prototype.setAttr = function (name, value) {
		if (value === null) this.removeAttribute(name);
		else this.setAttribute(name, String(value));
	};
	Element.prototype.getText = function () {
		return this.textContent || "";
	};
	HTMLElement.prototype.show = function () {
		this.style.display = "";
	};
	HTMLElement.prototype.hide = function () {
		this.style.display = "none";
	};

	// --- Events and components -------------------------------------------------------------
	class Events {
		constructor() {
			this._handlers = {};
		}
		on(name, callback, ctx) {
			const ref = { e: this, name, fn: callback, ctx };
			(this._handlers[name] = this._handlers[name] || []).push(ref);
			return ref;
		}
		offref(ref) {
			const list = this._handlers[ref.name] || [];
			const at = list.indexOf(ref);
			if (at >= 0) list.splice(at, 1);
		}
		trigger(name, ...args) {
			for (const ref of (this._handlers[name] || []).slice()) ref.fn.apply(ref.ctx, args);
		}
	}

	class Component {
		constructor() {
			this._cleanups = [];
			this._loaded = false;
		}
		load() {
			if (this._loaded) return;
			this._loaded = true;
			return this.onload();
		}
		onload() {}
		unload() {
			for (const cleanup of this._cleanups.splice(0)) cleanup();
			this._loaded = false;
			this.onunload();
		}
		onunload() {}
		register(cleanup) {
			this._cleanups.push(cleanup);
		}
		registerEvent(ref) {
			this.register(() => ref.e.offref(ref));
		}
		registerInterval(id) {
			this.register(() => window.clearInterval(id));
			return id;
		}
		registerDomEvent(el, type, callback, options) {
			el.addEventListener(type, callback, options);
			this.register(() => el.removeEventListener(type, callback, options));
		}
		addChild(child) {
			child.load();
			return child;
		}
	}

	// --- Files -----------------------------------------------------------------------------
	class TFile {
		constructor(path) {
			this.path = path;
			this.name = path.split("/").pop();
			const dot = this.name.lastIndexOf(".");
			this.basename = dot > 0 ? this.name.slice(0, dot) : this.name;
			this.extension = dot > 0 ? this.name.slice(dot + 1) : "";
		}
	}

	class FileSystemAdapter {
		constructor(basePath) {
			this.basePath = basePath;
		}
		getBasePath() {
			return this.basePath;
		}
		read(path) {
			return window.__vmRead(path);
		}
		exists(path) {
			return window.__vmRead(path).then(
				() => true,
				() => false,
			);
		}
	}

	class Vault extends Events {
		constructor(basePath, paths) {
			super();
			this.adapter = new FileSystemAdapter(basePath);
			this.files = paths.map((p) => new TFile(p));
		}
		getMarkdownFiles() {
			return this.files.filter((f) => f.extension === "md");
		}
		getAbstractFileByPath(path) {
			return this.files.find((f) => f.path === path) || null;
		}
		/** A link's target file, as Obsidian resolves it: a path, else the shortest name match. */
		resolve(linkpath) {
			const bare = linkpath.replace(/\.md$/, "");
			return (
				this.files.find((f) => f.path === `${bare}.md`) ||
				this.files.find((f) => f.path.endsWith(`/${bare}.md`)) ||
				this.files.find((f) => f.basename === bare) ||
				null
			);
		}
	}

	// --- Views, leaves and the workspace -----------------------------------------------------
	class View extends Component {
		constructor(leaf) {
			super();
			this.leaf = leaf;
			this.app = leaf.app;
			this.containerEl = document.createElement("div");
			this.containerEl.className = "workspace-leaf-content";
			const header = this.containerEl.createDiv("view-header");
			this.titleHeaderEl = header.createDiv("view-header-title");
		}
		getIcon() {
			return "";
		}
		onOpen() {}
		onClose() {}
	}

	class ItemView extends View {
		constructor(leaf) {
			super(leaf);
			this.contentEl = this.containerEl.createDiv("view-content");
		}
		addAction(icon, title, callback) {
			const el = this.titleHeaderEl.createEl("a", { cls: "view-action", attr: { "aria-label": title } });
			el.addEventListener("click", callback);
			return el;
		}
	}

	class WorkspaceLeaf extends Events {
		constructor(app) {
			super();
			this.app = app;
			this.view = null;
			this.tabEl = null;
		}
		async setViewState(state) {
			const creator = this.app.viewRegistry[state.type];
			if (!creator) throw new Error(`no view registered for ${state.type}`);
			this.view = creator(this);
			this.view.titleHeaderEl.setText(this.view.getDisplayText());
			this.app.workspace._mountRight(this);
			this.view.load();
			await this.view.onOpen();
		}
		getViewState() {
			return { type: this.view ? this.view.getViewType() : "empty" };
		}
		async detach() {
			if (!this.view) return;
			await this.view.onClose();
			this.view.unload();
			this.app.workspace._unmountRight(this);
			this.view = null;
		}
	}

	class Workspace extends Events {
		constructor(app) {
			super();
			this.app = app;
			this.rightLeaves = [];
			this.activeFile = null;
			this.layoutReady = true;
		}
		onLayoutReady(callback) {
			window.setTimeout(callback, 0);
		}
		getRightLeaf() {
			return new WorkspaceLeaf(this.app);
		}
		getLeavesOfType(type) {
			return this.rightLeaves.filter((leaf) => leaf.view && leaf.view.getViewType() === type);
		}
		async revealLeaf(leaf) {
			for (const other of this.rightLeaves) {
				const on = other === leaf;
				other.view.containerEl.style.display = on ? "" : "none";
				other.tabEl.toggleClass("is-active", on);
			}
		}
		detachLeavesOfType(type) {
			for (const leaf of this.getLeavesOfType(type)) leaf.detach();
		}
		getActiveFile() {
			return this.activeFile;
		}
		async openLinkText(linktext, sourcePath, newLeaf) {
			harness.opened.push({ linktext, sourcePath, newLeaf });
			const target = this.app.vault.resolve(linktext.split("#")[0]);
			if (target) await this.openFile(target, linktext.includes("#") ? linktext.slice(linktext.indexOf("#")) : "");
		}
		/** The harness's editor: shows the note in the main pane and tells the plugin. */
		async openFile(file, subpath) {
			this.activeFile = file;
			const text = await this.app.vault.adapter.read(file.path);
			window.renderNote(file, text, subpath || "");
			this.trigger("file-open", file);
			this.trigger("active-leaf-change", null);
		}
		_mountRight(leaf) {
			this.rightLeaves.push(leaf);
			const tabs = document.getElementById("right-tabs");
			leaf.tabEl = tabs.createDiv({ cls: "workspace-tab-header", text: leaf.view.getDisplayText() });
			leaf.tabEl.addEventListener("click", () => this.revealLeaf(leaf));
			document.getElementById("right-leaves").appendChild(leaf.view.containerEl);
			this.trigger("active-leaf-change", leaf);
		}
		_unmountRight(leaf) {
			this.rightLeaves.splice(this.rightLeaves.indexOf(leaf), 1);
			leaf.tabEl.remove();
			leaf.view.containerEl.remove();
		}
	}

	class SecretStorage extends Events {
		constructor() {
			super();
			this.secrets = new Map();
		}
		setSecret(id, secret) {
			if (!/^[a-z0-9-]+$/.test(id)) throw new Error(`invalid secret id ${id}`);
			this.secrets.set(id, secret);
		}
		getSecret(id) {
			return this.secrets.has(id) ? this.secrets.get(id) : null;
		}
		listSecrets() {
			return [...this.secrets.keys()];
		}
	}

	class Commands {
		constructor() {
			this.commands = {};
		}
		executeCommandById(id) {
			const command = this.commands[id];
			if (!command) return false;
			if (command.callback) command.callback();
			else if (command.checkCallback) command.checkCallback(false);
			return true;
		}
	}

	class App {
		constructor({ basePath, files, pluginData }) {
			this.vault = new Vault(basePath, files);
			this.workspace = new Workspace(this);
			this.secretStorage = new SecretStorage();
			this.commands = new Commands();
			this.viewRegistry = {};
			this.settingTabs = [];
			this.pluginData = pluginData || null;
		}
	}

	// --- Plugin ----------------------------------------------------------------------------
	class Plugin extends Component {
		constructor(app, manifest) {
			super();
			this.app = app;
			this.manifest = manifest;
		}
		addStatusBarItem() {
			return document.getElementById("status-bar").createDiv("status-bar-item");
		}
		addRibbonIcon(icon, title, callback) {
			const el = document.getElementById("ribbon").createDiv({ cls: "side-dock-ribbon-action", attr: { "aria-label": title } });
			el.addEventListener("click", callback);
			return el;
		}
		addCommand(command) {
			const full = Object.assign({}, command, {
				id: `${this.manifest.id}:${command.id}`,
				name: `${this.manifest.name}: ${command.name}`,
			});
			this.app.commands.commands[full.id] = full;
			return full;
		}
		registerView(type, creator) {
			this.app.viewRegistry[type] = creator;
		}
		addSettingTab(tab) {
			this.app.settingTabs.push(tab);
		}
		async loadData() {
			return this.app.pluginData ? JSON.parse(JSON.stringify(this.app.pluginData)) : null;
		}
		async saveData(data) {
			this.app.pluginData = JSON.parse(JSON.stringify(data));
			harness.saved.push(this.app.pluginData);
		}
	}

	// --- Modals, notices, settings ---------------------------------------------------------
	class Modal {
		constructor(app) {
			this.app = app;
			this.containerEl = document.createElement("div");
			this.containerEl.className = "modal-container mod-dim";
			const bg = this.containerEl.createDiv("modal-bg");
			bg.addEventListener("click", () => this.close());
			this.modalEl = this.containerEl.createDiv("modal");
			const close = this.modalEl.createDiv({ cls: "modal-close-button", text: "×" });
			close.addEventListener("click", () => this.close());
			this.titleEl = this.modalEl.createDiv("modal-title");
			this.contentEl = this.modalEl.createDiv("modal-content");
			this._onKey = (event) => {
				if (event.key === "Escape") this.close();
			};
		}
		setTitle(title) {
			this.titleEl.setText(title);
			return this;
		}
		open() {
			document.body.appendChild(this.containerEl);
			document.addEventListener("keydown", this._onKey);
			this.onOpen();
		}
		close() {
			if (!this.containerEl.isConnected) return;
			document.removeEventListener("keydown", this._onKey);
			this.containerEl.remove();
			this.onClose();
		}
		onOpen() {}
		onClose() {}
	}

	class Notice {
		constructor(message, duration) {
			const text = message instanceof Node ? message.textContent : String(message);
			harness.notices.push(text);
			this.noticeEl = document.getElementById("notices").createDiv({ cls: "notice", text });
			this.messageEl = this.noticeEl;
			this.noticeEl.addEventListener("click", () => this.hide());
			if (duration !== 0) window.setTimeout(() => this.hide(), duration || 5000);
		}
		setMessage(message) {
			this.noticeEl.setText(message);
			return this;
		}
		hide() {
			this.noticeEl.remove();
		}
	}

	class PluginSettingTab {
		constructor(app, plugin) {
			this.app = app;
			this.plugin = plugin;
			this.containerEl = document.createElement("div");
			this.containerEl.className = "vertical-tab-content";
		}
		display() {}
		hide() {}
	}

	class TextComponent {
		constructor(containerEl) {
			this.inputEl = containerEl.createEl("input", { type: "text" });
		}
		setValue(value) {
			this.inputEl.value = value;
			return this;
		}
		getValue() {
			return this.inputEl.value;
		}
		setPlaceholder(text) {
			this.inputEl.placeholder = text;
			return this;
		}
		onChange(callback) {
			this.inputEl.addEventListener("input", () => callback(this.inputEl.value));
			return this;
		}
	}

	class ButtonComponent {
		constructor(containerEl) {
			this.buttonEl = containerEl.createEl("button");
		}
		setButtonText(text) {
			this.buttonEl.setText(text);
			return this;
		}
		setCta() {
			this.buttonEl.addClass("mod-cta");
			return this;
		}
		setWarning() {
			this.buttonEl.addClass("mod-warning");
			return this;
		}
		onClick(callback) {
			this.buttonEl.addEventListener("click", callback);
			return this;
		}
	}

	class Setting {
		constructor(containerEl) {
			this.settingEl = containerEl.createDiv("setting-item");
			this.infoEl = this.settingEl.createDiv("setting-item-info");
			this.nameEl = this.infoEl.createDiv("setting-item-name");
			this.descEl = this.infoEl.createDiv("setting-item-description");
			this.controlEl = this.settingEl.createDiv("setting-item-control");
		}
		setName(name) {
			this.nameEl.setText(name);
			return this;
		}
		setDesc(desc) {
			this.descEl.setText(desc);
			return this;
		}
		setHeading() {
			this.settingEl.addClass("setting-item-heading");
			return this;
		}
		addText(callback) {
			callback(new TextComponent(this.controlEl));
			return this;
		}
		addButton(callback) {
			callback(new ButtonComponent(this.controlEl));
			return this;
		}
	}

	// --- requestUrl: out through the test's Node side, like Electron's (no CORS) -------------
	async function requestUrl(request) {
		const param = typeof request === "string" ? { url: request } : request;
		const op = param.url.split("/v1/")[1] || param.url;
		const record = { op, body: param.body ? JSON.parse(param.body) : null, status: null };
		harness.requests.push(record);
		const response = await window.__vmRequest({
			url: param.url,
			method: param.method || "GET",
			contentType: param.contentType,
			body: param.body,
			headers: param.headers || {},
		});
		record.status = response.status;
		if (param.throw !== false && response.status >= 400) throw new Error(`Request failed, status ${response.status}`);
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

	window.obsidianShim = {
		App,
		ButtonComponent,
		Component,
		Events,
		FileSystemAdapter,
		ItemView,
		Modal,
		Notice,
		Plugin,
		PluginSettingTab,
		SecretStorage,
		Setting,
		TextComponent,
		TFile,
		View,
		Workspace,
		WorkspaceLeaf,
		requestUrl,
	};

	/** Loads main.js as Obsidian does (CommonJS, `require("obsidian")`) and enables the plugin. */
	window.bootPlugin = async function ({ source, manifest, basePath, files, token, pluginData }) {
		const app = new App({ basePath, files, pluginData });
		if (token) app.secretStorage.setSecret("vaultmem-token", token);
		const module = { exports: {} };
		const require = (name) => {
			if (name === "obsidian") return window.obsidianShim;
			throw new Error(`main.js asked for ${name}, which Obsidian does not provide`);
		};
		new Function("module", "exports", "require", source)(module, module.exports, require);
		const PluginClass = module.exports.default || module.exports;
		const plugin = new PluginClass(app, manifest);
		await plugin.load();
		window.app = app;
		window.plugin = plugin;
		document.getElementById("vault-name").setText(basePath.split("/").pop());
		return Object.keys(app.commands.commands);
	};
})();
