"""vaultmem/store/dashboard.py: the Obsidian Bases dashboard over the memory notes.

The allow-lists below come from Obsidian's own help, obsidianmd/obsidian-help:
`en/Bases/Bases syntax.md` (file layout; filter objects `and`/`or`/`not`; the operators
tables; the file properties table; `views` with `type`, `name`, `limit`, `filters`,
`groupBy` {property, direction}, `order`; `properties` with `displayName`),
`en/Bases/Functions.md` (the functions) and `en/Bases/Views.md` (layouts, sort and group).
A view's `sort` list of {property, direction: ASC|DESC} is `BasesSortConfig` in Obsidian's
API (obsidianmd/obsidian-api, `obsidian.d.ts`, `BasesViewConfig.getSort`), the key Obsidian
writes when a person sorts a view from its toolbar.
"""

import doctest
import re

import pytest
import yaml

from vaultmem.store import dashboard
from vaultmem.store.dashboard import DASHBOARD_NAME, dashboard_text, ensure_dashboard
from vaultmem.store.init import init_vault
from vaultmem.store.layout import NOTE_TYPES
from vaultmem.store.values import STATUSES
from vaultmem.store.vault import Vault

# SPEC §3's frontmatter keys, plus `attribute` (the slot a statement fills).
FRONTMATTER = {"id", "type", "status", "created", "updated", "valid_from", "valid_to",
               "importance", "confidence", "tags", "aliases", "entities", "sources",
               "source_messages", "supersedes", "superseded_by", "run", "user", "attribute"}
# Bases syntax.md, "File properties", and Functions.md, "File type / Fields".
FILE_PROPERTIES = {"file.backlinks", "file.ctime", "file.embeds", "file.ext", "file.file",
                   "file.folder", "file.links", "file.mtime", "file.name", "file.path",
                   "file.properties", "file.size", "file.tags", "file.basename"}
# Functions.md: the file functions a filter may call (File type), and the global ones.
FUNCTIONS = {"file.inFolder", "file.hasProperty", "file.hasTag", "file.hasLink",
             "date", "now", "today", "list", "number"}
# Bases syntax.md, "Comparison operators", "Boolean operators" and "Arithmetic operators".
OPERATORS = {"==", "!=", ">", "<", ">=", "<=", "!", "&&", "||", "+", "-", "*", "/", "%"}
FILTER_KEYS = {"and", "or", "not"}                       # Bases syntax.md, "Filters"
VIEW_KEYS = {"type", "name", "limit", "groupBy", "filters", "order", "summaries", "sort"}
TOP_KEYS = {"filters", "formulas", "properties", "summaries", "views"}
DIRECTIONS = {"ASC", "DESC"}

TOKEN = re.compile(r"""\s*(?:
    (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>\d+(?:\.\d+)?)
  | (?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?P<call>\s*\()?
  | (?P<op>==|!=|>=|<=|&&|\|\||[<>!+\-*/%])
  | (?P<punct>[(),])
)""", re.VERBOSE)


def tokens(expression):
    """(kind, text) of each token of a filter expression; fails on anything else."""
    at, found = 0, []
    while at < len(expression.rstrip()):
        match = TOKEN.match(expression, at)
        assert match and match.end() > at, f"cannot read {expression[at:]!r} in {expression!r}"
        kind = next(k for k in ("string", "number", "name", "op", "punct") if match.group(k))
        if kind == "name" and match.group("call"):
            kind = "call"
        found.append((kind, match.group(kind if kind != "call" else "name")))
        at = match.end()
    return found


def expressions(node):
    """Every filter statement of a filter object (a string, or one of and/or/not)."""
    if isinstance(node, str):
        yield node
        return
    assert isinstance(node, dict) and len(node) == 1 and set(node) <= FILTER_KEYS, node
    (items,) = node.values()
    assert isinstance(items, list) and items
    for item in items:
        yield from expressions(item)


def is_property(name):
    if name.startswith("file."):
        return name in FILE_PROPERTIES
    return name.removeprefix("note.") in FRONTMATTER


def all_filters(base):
    yield base["filters"]
    for view in base["views"]:
        if "filters" in view:
            yield view["filters"]


@pytest.fixture
def base():
    return yaml.safe_load(dashboard_text("Memory"))


def test_the_text_is_yaml_with_a_comment_saying_who_wrote_it():
    text = dashboard_text("Memory")
    assert text.startswith("# ")
    head = text.split("\n", 3)[:3]
    assert "vaultmem" in head[0] and any("yours" in line for line in head)
    assert set(yaml.safe_load(text)) <= TOP_KEYS


def test_four_table_views(base):
    names = [view["name"] for view in base["views"]]
    assert names == ["Active memories", "Recently changed", "Superseded", "Forgetting candidates"]
    for view in base["views"]:
        assert view["type"] == "table"
        assert set(view) <= VIEW_KEYS, set(view) - VIEW_KEYS
        assert view["order"][0] == "file.name"


def test_every_property_named_is_a_frontmatter_field_or_a_file_property(base):
    named = set(base["properties"])
    for view in base["views"]:
        named |= set(view["order"])
        named |= {rule["property"] for rule in view.get("sort", [])}
        if "groupBy" in view:
            named.add(view["groupBy"]["property"])
    unknown = {name for name in named if not is_property(name)}
    assert not unknown
    for props in base["properties"].values():
        assert set(props) == {"displayName"}


def test_sorts_and_groups_name_a_property_and_a_direction(base):
    views = {view["name"]: view for view in base["views"]}
    for view in base["views"]:
        for rule in view.get("sort", []) + ([view["groupBy"]] if "groupBy" in view else []):
            assert set(rule) == {"property", "direction"} and rule["direction"] in DIRECTIONS
    assert views["Active memories"]["groupBy"] == {"property": "note.type", "direction": "ASC"}
    assert views["Recently changed"]["sort"][0] == {"property": "note.updated", "direction": "DESC"}
    assert views["Forgetting candidates"]["sort"][0] == {"property": "note.updated", "direction": "ASC"}
    assert {"note.superseded_by", "note.valid_to"} <= set(views["Superseded"]["order"])


def test_filters_use_only_documented_functions_operators_and_real_fields(base):
    literals = set()
    for node in all_filters(base):
        for expression in expressions(node):
            for kind, text in tokens(expression):
                if kind == "call":
                    assert text in FUNCTIONS, f"{text}() is not a documented function"
                elif kind == "name":
                    assert text in {"true", "false"} or is_property(text), f"unknown {text}"
                elif kind == "op":
                    assert text in OPERATORS
                elif kind == "string":
                    literals.add(text[1:-1])
    # Every string is a note type, a status, the memory folder, the extension or a field.
    assert literals <= set(NOTE_TYPES) | set(STATUSES) | FRONTMATTER | {"Memory", "md"}


def test_views_select_what_their_names_say(base):
    views = {view["name"]: list(expressions(view.get("filters", "true"))) for view in base["views"]}
    scope = list(expressions(base["filters"]))
    assert 'file.inFolder("Memory")' in scope
    assert not any('"session"' in e or '"entity"' in e for e in scope)  # statements only
    assert {f'type == "{t}"' for t in ("fact", "preference", "event", "procedure")} <= set(scope)
    assert views["Active memories"] == ['status == "active"']
    assert views["Superseded"] == ['status == "superseded"']
    assert 'status == "active"' in views["Forgetting candidates"]
    assert f"importance < {dashboard.GC_IMPORTANCE}" in views["Forgetting candidates"]


@pytest.mark.parametrize("root", ["Mem", "AI/Long memory", 'Odd "quoted" #folder: yes'])
def test_the_configured_memory_root_is_the_folder_filtered(root):
    base = yaml.safe_load(dashboard_text(root))
    calls = [e for e in expressions(base["filters"]) if e.startswith("file.inFolder(")]
    assert len(calls) == 1
    ((kind, folder),) = [t for t in tokens(calls[0]) if t[0] == "string"]
    assert yaml.safe_load(folder) == root  # a JSON string is a YAML double-quoted scalar
    assert '"Memory"' not in dashboard_text(root)  # the default folder named nowhere


def test_module_doctest():
    assert doctest.testmod(dashboard).failed == 0


# --- writing it into a vault -------------------------------------------------------------

def custom_vault(tmp_path, memory_root):
    root = tmp_path / "vault"
    (root / ".vaultmem").mkdir(parents=True)
    (root / ".vaultmem" / "config.toml").write_text(f'memory_root = "{memory_root}"\n', encoding="utf-8")
    init_vault(root)
    return Vault(root)


def without_dashboard(vault):
    """`vault` after taking away the dashboard its init wrote (init does write it)."""
    path = vault.memory_dir / DASHBOARD_NAME
    assert path.read_text(encoding="utf-8") == dashboard_text(vault.config.memory_root)
    path.unlink()
    return vault


def test_ensure_dashboard_writes_once_and_never_over_a_persons_edit(tmp_path):
    result = init_vault(tmp_path / "vault")
    assert f"Memory/{DASHBOARD_NAME}" in result["created"]
    again = init_vault(tmp_path / "vault")      # a second init keeps it and says nothing of it
    assert f"Memory/{DASHBOARD_NAME}" not in again["created"]
    vault = without_dashboard(Vault(result["vault"]))
    path = vault.memory_dir / DASHBOARD_NAME
    assert ensure_dashboard(vault) == f"Memory/{DASHBOARD_NAME}"
    assert path.read_text(encoding="utf-8") == dashboard_text("Memory")
    assert ensure_dashboard(vault) is None
    edited = path.read_text(encoding="utf-8").replace("Recently changed", "My recent memories")
    path.write_text(edited, encoding="utf-8")
    assert ensure_dashboard(vault) is None
    assert path.read_text(encoding="utf-8") == edited
    assert not [p.name for p in path.parent.iterdir() if p.name.startswith(".vaultmem-")]


def test_ensure_dashboard_leaves_a_link_of_that_name_alone(tmp_path):
    vault = without_dashboard(Vault(init_vault(tmp_path / "vault")["vault"]))
    elsewhere = tmp_path / "mine.base"
    (vault.memory_dir / DASHBOARD_NAME).symlink_to(elsewhere)  # dangling: not even created
    assert ensure_dashboard(vault) is None
    assert not elsewhere.exists()


def test_ensure_dashboard_uses_the_configured_memory_root(tmp_path):
    vault = without_dashboard(custom_vault(tmp_path, "Mem"))
    assert ensure_dashboard(vault) == f"Mem/{DASHBOARD_NAME}"
    base = yaml.safe_load((vault.root / "Mem" / DASHBOARD_NAME).read_text(encoding="utf-8"))
    assert 'file.inFolder("Mem")' in list(expressions(base["filters"]))
    assert not (vault.root / "Memory").exists()


def test_a_race_lost_to_another_writer_keeps_theirs(tmp_path, monkeypatch):
    vault = without_dashboard(Vault(init_vault(tmp_path / "vault")["vault"]))
    path = vault.memory_dir / DASHBOARD_NAME
    real_write = dashboard.atomic_write

    def obsidian_saves_first(target, text, **options):
        # Between ensure_dashboard's look and its write, the person saves a base there.
        target.write_text("views: []\n", encoding="utf-8")
        return real_write(target, text, **options)

    monkeypatch.setattr(dashboard, "atomic_write", obsidian_saves_first)
    assert ensure_dashboard(vault) is None
    assert path.read_text(encoding="utf-8") == "views: []\n"


def test_the_indexer_skips_the_dashboard(tmp_path):
    vault = Vault(init_vault(tmp_path / "vault")["vault"])
    ensure_dashboard(vault)
    assert vault.is_ignored(f"Memory/{DASHBOARD_NAME}")
    assert not vault.is_memory_path(f"Memory/{DASHBOARD_NAME}")
    assert all(p.suffix == ".md" for p in vault.iter_notes())
