// One real daemon for the whole run: a fresh vault, the person's notes, the plugin's token,
// `daemon start`, then a fresh `extract` of a garden conversation through it.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import {
	GARDEN_CHAT,
	NO_CLI_LINE,
	findCli,
	newVault,
	removeVault,
	seedNotes,
	startDaemon,
	stopDaemon,
	vaultmem,
	waitFor,
	writeTranscript,
} from "./support/daemon";
import { send } from "./support/http";

export interface SharedDaemon {
	/** Why the daemon suites skip, or "" when they run. */
	skip: string;
	cli: string;
	vault: string;
	url: string;
	token: string;
	/** The run id of the garden extract. */
	run: string;
	/** The memory notes that extract wrote. */
	notes: string[];
}

declare module "vitest" {
	export interface ProvidedContext {
		daemon: SharedDaemon;
	}
}

export default async function setup(project: TestProject) {
	const cli = findCli();
	if (!cli) {
		console.log(NO_CLI_LINE);
		project.provide("daemon", { skip: NO_CLI_LINE, cli: "", vault: "", url: "", token: "", run: "", notes: [] });
		return;
	}
	const vault = newVault("shared");
	vaultmem(cli, vault, ["init", vault, "--model", "all-MiniLM-L6-v2", "--json"]);
	seedNotes(vault);
	const daemon = startDaemon(cli, vault);
	try {
		await waitFor("the daemon to be watching", 170, async () => {
			const answer = await send({
				url: `${daemon.url}/v1/status`,
				method: "POST",
				contentType: "application/json",
				headers: { Authorization: `Bearer ${daemon.token}` },
				body: "{}",
			});
			return JSON.parse(answer.text)?.result?.state === "watching" ? true : null;
		});
		const chats = mkdtempSync(path.join(os.tmpdir(), "vaultmem-plugin-chat-"));
		const transcript = writeTranscript(chats, "garden-chat", GARDEN_CHAT);
		const extract = vaultmem(cli, vault, ["extract", transcript, "--json"]);
		rmSync(chats, { recursive: true, force: true });
		project.provide("daemon", { skip: "", cli, ...daemon, run: extract.run, notes: extract.notes });
	} catch (error) {
		stopDaemon(cli, vault);
		throw error;
	}
	return () => {
		stopDaemon(cli, vault);
		removeVault(vault);
	};
}
