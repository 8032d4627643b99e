"""Wikilinks read and resolved as Obsidian does (vaultmem/store/links.py), and entity links that
go to the user's own note through its alias."""

import json
import unicodedata

import pytest

from vaultmem.store.links import Link, LinkResolver, entity_link, note_aliases, parse_link, wikilinks


def targets(text):
    return [link.target for link in wikilinks(text)]


def make(root, rel, text=""):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- reading links out of Markdown ----------------------------------------------------
def test_a_link_has_target_anchor_label_and_embed():
    assert wikilinks("See [[Tea#Green tea|green]] and ![[pic.png|100]].") == [
        Link("Tea", "Green tea", "green", False, "[[Tea#Green tea|green]]"),
        Link("pic.png", "", "100", True, "![[pic.png|100]]")]
    assert wikilinks("[[Sessions/2026-11-29 chat#^m-12]]")[0].anchor == "^m-12"
    assert wikilinks("[[#Heading]]")[0] == Link("", "Heading", "", False, "[[#Heading]]")
    assert targets("[[Note.md]] [[Guide.pdf]]") == ["Note.md", "Guide.pdf"]


def test_an_escaped_pipe_in_a_table_row_separates_the_label():
    table = ("| Person | Photo |\n| --- | --- |\n"
             "| [[Engelbart\\|Doug]] | ![[Engelbart.jpg\\|100]] |\n")
    links = wikilinks(table)
    assert [(link.target, link.label, link.embed) for link in links] == [
        ("Engelbart", "Doug", False), ("Engelbart.jpg", "100", True)]
    assert links[1].raw == "![[Engelbart.jpg\\|100]]"


def test_links_in_inline_code_are_not_links():
    assert targets("Type `[[Code]]` or ``a `[[Two]]` b`` to link [[Real]].") == ["Real"]
    # An unclosed backtick is a literal backtick; a code span ends with its paragraph.
    assert targets("A ` stray tick then [[Kept]].") == ["Kept"]
    assert targets("`open\n\n[[After a blank line]]` x") == ["After a blank line"]


def test_links_in_fenced_code_blocks_are_not_links():
    text = ("[[Before]]\n```python\nx = '[[In backticks]]'\n```\n"
            "~~~~\n[[In tildes]]\n```\n[[Still in, ``` does not close ~~~~]]\n~~~~\n"
            "````md\n```\n[[Inside four]]\n```\n````\n"
            "- item\n  ```\n  [[In a list's fence]]\n  ```\n[[After]]\n")
    assert targets(text) == ["Before", "After"]
    assert targets("```\n[[Never closed]]\n") == []
    assert targets("```not a fence``` [[Inline]]") == ["Inline"]


def test_links_in_comments_are_not_links():
    assert targets("[[A]] %%hidden [[B]]%% [[C]] %%\n[[D]] over\nlines %% [[E]]") == ["A", "C", "E"]
    assert targets("[[A]] %% never closed [[B]]\n\n[[C]]") == ["A"]
    assert targets("`%%` [[Not a comment]] `%%`") == ["Not a comment"]


def test_a_property_value_is_read_as_a_link():
    assert parse_link("[[People/Alice Chen|Alice]]") == Link(
        "People/Alice Chen", "", "Alice", False, "[[People/Alice Chen|Alice]]")
    assert parse_link("Coffee") == Link("Coffee", raw="[[Coffee]]")


# --- resolving them --------------------------------------------------------------------
@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    make(root, "Help/Properties.md", "# Properties\n")
    make(root, "Projects/Plan.md", "# Plan\n")
    make(root, "Archive/Old/Plan.md", "# Old plan\n")
    make(root, "Archive/Old/Notes from then.md")
    make(root, "Daily/2026.01.02.md")
    make(root, "Attachments/Engelbart.jpg", "not really a jpeg")
    make(root, "Attachments/pic.png", "png")
    make(root, "Memory/Facts/Tea.md", "---\ntype: fact\n---\nThe user drinks tea.\n")
    make(root, ".obsidian/Hidden.md")
    make(root, ".trash/Gone.md")
    make(root, ".vaultmem/State.md")
    return root


def test_names_resolve_case_insensitively(vault):
    resolver = LinkResolver(vault)
    assert resolver.resolve("properties") == "Help/Properties.md"
    assert resolver.resolve("PROPERTIES.md") == "Help/Properties.md"
    assert resolver.resolve("tea") == "Memory/Facts/Tea.md"
    assert resolver.resolve("2026.01.02") == "Daily/2026.01.02.md"
    assert resolver.resolve("Nowhere") is None


def test_nfc_and_nfd_names_are_one_name(tmp_path):
    nfd = unicodedata.normalize("NFD", "Café Zürich")
    make(tmp_path, f"Places/{nfd}.md")
    resolver = LinkResolver(tmp_path)
    nfc = unicodedata.normalize("NFC", "café zürich")
    assert resolver.resolve(nfc) == f"Places/{nfd}.md"  # the name as it is on disk
    assert resolver.resolve(unicodedata.normalize("NFD", "Café Zürich")) == f"Places/{nfd}.md"


def test_same_name_prefers_the_linking_notes_folder_then_the_shortest_path(vault):
    resolver = LinkResolver(vault)
    assert resolver.resolve("Plan") == "Projects/Plan.md"
    assert resolver.resolve("Plan", "Daily/2026.01.02.md") == "Projects/Plan.md"
    assert resolver.resolve("Plan", "Archive/Old/Notes from then.md") == "Archive/Old/Plan.md"
    assert resolver.linktext("Projects/Plan.md") == "Plan"
    assert resolver.linktext("Archive/Old/Plan.md") == "Archive/Old/Plan"


def test_paths_resolve_from_the_root_by_their_tail_and_relatively(vault):
    resolver = LinkResolver(vault)
    assert resolver.resolve("Archive/Old/Plan") == "Archive/Old/Plan.md"
    assert resolver.resolve("Memory/Facts/Tea.md") == "Memory/Facts/Tea.md"
    assert resolver.resolve("Facts/Tea") == "Memory/Facts/Tea.md"
    assert resolver.resolve("old/plan") == "Archive/Old/Plan.md"
    assert resolver.resolve("ld/Plan") is None  # a tail is whole folder names
    assert resolver.resolve("Other/Plan") is None
    assert resolver.resolve("./Plan", "Archive/Old/Notes from then.md") == "Archive/Old/Plan.md"
    assert resolver.resolve("../../Projects/Plan", "Archive/Old/Notes from then.md") == "Projects/Plan.md"


def test_attachments_resolve_and_dot_folders_are_left_out(vault):
    resolver = LinkResolver(vault)
    (embed,) = wikilinks("![[pic.png|100]]")
    assert resolver.resolve(embed.target) == "Attachments/pic.png" and resolver.problem(embed) is None
    assert resolver.resolve("Attachments/Engelbart.jpg") == "Attachments/Engelbart.jpg"
    assert [resolver.resolve(name) for name in ("Hidden", "Gone", "State", ".obsidian/Hidden")] == [None] * 4


def test_a_file_added_later_resolves(vault):
    resolver = LinkResolver(vault)
    make(vault, "Memory/Entities/Lisbon.md")
    resolver.add("Memory/Entities/Lisbon.md")
    assert resolver.resolve("lisbon") == "Memory/Entities/Lisbon.md"


# --- aliases ---------------------------------------------------------------------------
ALIASED = {
    "People/Alice Chen.md": "---\naliases:\n  - Alice\n  - \"A. Chen\"\ntags: [people]\n---\n# Alice\n",
    "People/Bob Stone.md": "---\nalias: Bobby\n---\n",
    "People/Carol.md": "---\ntype: person\naliases: [Caz, 'Carol K']\n---\n",
    "People/Dan.md": "---\naliases: [Danny\n---\n",                          # broken YAML
    "People/Eve.md": "---\naliases:\n  - Evie\ntitle: \"unclosed\n---\n",    # broken YAML
    "People/Finn.md": "---\naliases:\n\t- Finnegan\n---\n",                  # tabs: broken
    "People/Gus.md": "# No frontmatter\n\naliases: [Gussie]\n",
    "People/Hal.md": "---\naliases: Hally # a comment\nnote: 12\" record\n---\n",
}


def test_aliases_as_a_list_a_flow_list_or_a_string(tmp_path):
    for rel, text in ALIASED.items():
        make(tmp_path, rel, text)
    found = {rel: note_aliases(tmp_path / rel) for rel in ALIASED}
    assert found == {"People/Alice Chen.md": ["Alice", "A. Chen"], "People/Bob Stone.md": ["Bobby"],
                     "People/Carol.md": ["Caz", "Carol K"], "People/Dan.md": [], "People/Eve.md": [],
                     "People/Finn.md": [], "People/Gus.md": [], "People/Hal.md": ["Hally"]}
    resolver = LinkResolver(tmp_path)
    assert resolver.by_alias("alice") == "People/Alice Chen.md"
    assert resolver.by_alias("carol k") == "People/Carol.md"
    assert resolver.by_alias("Danny") is None and resolver.by_alias("Evie") is None
    assert resolver.note_named("Alice") == ("People/Alice Chen.md", True)
    assert resolver.note_named("alice chen") == ("People/Alice Chen.md", False)
    assert resolver.note_named("Zed") is None


def test_a_bare_alias_does_not_resolve_and_the_problem_says_what_to_write(tmp_path):
    make(tmp_path, "People/Alice Chen.md", ALIASED["People/Alice Chen.md"])
    resolver = LinkResolver(tmp_path)
    assert resolver.resolve("Alice") is None
    assert resolver.problem(parse_link("[[Alice]]")) == \
        "links to an alias of Alice Chen; write [[Alice Chen|Alice]]"
    assert resolver.problem(parse_link("[[Alice Chen|Alice]]")) is None
    assert entity_link(resolver, "Alice") == "[[Alice Chen|Alice]]"
    assert entity_link(resolver, "Alice Chen") == "[[Alice Chen]]"
    assert entity_link(resolver, "Lisbon") == "[[Lisbon]]"


# --- anchors ---------------------------------------------------------------------------
SESSION = ("---\ntype: session\n---\n# 2026-11-29 chat\n\n## Links & Tags: how-to\n\n"
           "**Alice** · 10:00\nI drink too much coffee. ^m-1\n\n"
           "**Alice** · 10:05\nTea later. ^m-12  \n\nA table\n\n^table-1\n\n"
           "```\n## Not a heading\nnot a block ^m-99\n```\n### Deeper\n")


def test_heading_anchors_compare_without_case_and_punctuation(tmp_path):
    make(tmp_path, "Sessions/Chat.md", SESSION)
    resolver = LinkResolver(tmp_path)
    assert resolver.has_anchor("Sessions/Chat.md", "links & tags: how-to")
    assert resolver.has_anchor("Sessions/Chat.md", "Links  Tags how to")
    assert resolver.has_anchor("Sessions/Chat.md", "2026-11-29 chat#Deeper")
    assert not resolver.has_anchor("Sessions/Chat.md", "Not a heading")
    assert not resolver.has_anchor("Sessions/Chat.md", "Links#Nowhere")


def test_a_block_id_ends_its_line(tmp_path):
    make(tmp_path, "Sessions/Chat.md", SESSION)
    resolver = LinkResolver(tmp_path)
    for block, found in (("^m-1", True), ("^m-12", True), ("^table-1", True), ("^m-2", False),
                         ("^m", False), ("^m-99", False)):
        assert resolver.has_anchor("Sessions/Chat.md", block) is found, block
    assert resolver.problem(parse_link("[[Chat#^m-2]]")) == "no such block"
    assert resolver.problem(parse_link("[[Chat#Nope]]")) == "no such heading"
    assert resolver.problem(parse_link("[[Chat#^m-12]]")) is None


# --- entity hubs link to the user's note through its alias -----------------------------
def test_an_entity_that_is_an_alias_links_to_the_users_note(tmp_path, embedder):
    from vaultmem.api import Memory, init
    from vaultmem.store.note import parse_note

    root = tmp_path / "vault"
    init(root)
    person = make(root, "People/Alice Chen.md", ALIASED["People/Alice Chen.md"] + "Met at work.\n")
    before = person.read_bytes()
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(json.dumps({"session": "chat-1", "id": "m-1", "time": "2026-11-29T10:00:00",
                                      "speaker": "Ada", "role": "user",
                                      "text": "My friend Alice is a nurse in Lisbon."}) + "\n")
    memory = Memory(root, embedder=embedder)
    report = memory.extract([transcript])
    memories = [rel for rel in report["notes"] if "/Facts/" in rel]
    assert memories, report
    entities = parse_note((root / memories[0]).read_text(encoding="utf-8")).meta["entities"]
    assert "[[Alice Chen|Alice]]" in entities and "[[Lisbon]]" in entities and "[[Alice]]" not in entities
    assert not (root / "Memory/Entities/Alice.md").exists()
    assert (root / "Memory/Entities/Lisbon.md").exists()  # no note of that name: a hub, as before
    assert person.read_bytes() == before
    assert memory.doctor()["broken_links"] == []

    result = memory.add("Alice plays the cello.", entities=["Alice"])
    entities = parse_note((root / result["path"]).read_text(encoding="utf-8")).meta["entities"]
    assert list(entities) == ["[[Alice Chen|Alice]]"]
    assert not (root / "Memory/Entities/Alice.md").exists() and person.read_bytes() == before


def test_offline_hubs_name_a_titled_person_whole_and_never_a_title_or_a_weekday(tmp_path, embedder):
    """"Dr. Lee" is one hub, not "Dr" and "Lee"; "Thursdays" names no one; a capital that opens
    a line of pasted text names nothing."""
    from vaultmem.api import Memory, init

    root = tmp_path / "vault"
    init(root)
    transcript = tmp_path / "chat.jsonl"
    lines = [("m-1", "My dermatologist, Dr. Lee, removed a suspicious mole from my back and it was benign."),
             ("m-2", "I go to pottery with Anna on Thursdays at the Clay Studio."),
             ("m-3", "My manager sent me this note for the rota:\nIf you swap a shift, tell me first.\n"
                     "Based on last month I moved to the early shift at Harbor Clinic.")]
    transcript.write_text("".join(json.dumps({"session": "chat-1", "id": mid, "time": "2026-11-29T10:00:00",
                                              "speaker": "Ada", "role": "user", "text": text}) + "\n"
                                  for mid, text in lines))
    Memory(root, embedder=embedder).extract([transcript])
    hubs = sorted(p.stem for p in (root / "Memory/Entities").glob("*.md"))
    assert "Dr. Lee" in hubs and "Anna" in hubs, hubs
    assert not {"Dr", "Lee", "Thursdays", "If", "Based"} & set(hubs), hubs
