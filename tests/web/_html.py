"""A tiny HTML tree (stdlib html.parser) so page tests can ask structural questions."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


@dataclass
class Node:
    """One element: tag, attributes, children and text."""

    tag: str
    attrs: dict[str, str | None]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        """All text inside, whitespace collapsed."""
        parts: list[str] = []
        for child in self.children:
            parts.append(child if isinstance(child, str) else child.text())
        return " ".join("".join(parts).split())

    def iter(self) -> list[Node]:
        """This node and every element below it, in document order."""
        out = [self]
        for child in self.children:
            if isinstance(child, Node):
                out.extend(child.iter())
        return out

    def find_all(self, tag: str | None = None, **attrs: str | None) -> list[Node]:
        """Elements with this tag (any when None) whose attributes equal the given ones
        (use class_ for class; True-ish matching: value None means "present")."""
        found = []
        for node in self.iter():
            if tag is not None and node.tag != tag:
                continue
            ok = True
            for key, value in attrs.items():
                name = key.rstrip("_").replace("_", "-")
                if name not in node.attrs:
                    ok = False
                    break
                if value is not None:
                    actual = node.attrs[name] or ""
                    if name == "class":
                        if value not in actual.split():
                            ok = False
                            break
                    elif actual != value:
                        ok = False
                        break
            if ok:
                found.append(node)
        return found

    def find(self, tag: str | None = None, **attrs: str | None) -> Node | None:
        """The first match of find_all, or None."""
        matches = self.find_all(tag, **attrs)
        return matches[0] if matches else None

    def one(self, tag: str | None = None, **attrs: str | None) -> Node:
        """The first match; fails the test when there is none."""
        node = self.find(tag, **attrs)
        assert node is not None, f"no <{tag} {attrs}>"
        return node

    def ancestor(self, tag: str) -> Node | None:
        """The nearest enclosing element with this tag."""
        node = self.parent
        while node is not None and node.tag != tag:
            node = node.parent
        return node


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), parent=self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Node(tag, dict(attrs), parent=self.current))

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(html: str) -> Node:
    """The document tree of an HTML string."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root


def table_rows(table: Node) -> list[list[str]]:
    """The text of every body row's cells (th and td)."""
    body = table.find("tbody") or table
    return [
        [c.text() for c in row.children if isinstance(c, Node) and c.tag in ("th", "td")]
        for row in body.find_all("tr")
    ]
