"""Jinja rendering of models.

The context: config(), ref(), source(), var(), env_var(), is_incremental(), this.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, StrictUndefined, Template, TemplateError, TemplateSyntaxError

from lakewide.errors import ConfigError, LakewideError
from lakewide.nodes import Relation
from lakewide.profiles import env_var
from lakewide.sources import Source
from lakewide.text_files import read_utf8

_CONFIG_CALL = re.compile(r"\bconfig\s*\(")


@dataclass
class RenderResult:
    """What one rendering of a model produced and recorded."""

    sql: str
    config: dict[str, Any] = field(default_factory=dict)
    config_line: int | None = None
    refs: list[str] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)


class Renderer:
    """Renders model files with the project's macros (compiled once) and jinja helpers."""

    def __init__(
        self,
        macro_files: list[Path],
        variables: dict[str, Any],
        sources: dict[tuple[str, str], Source],
    ) -> None:
        self.env = Environment(undefined=StrictUndefined, keep_trailing_newline=True)
        self.variables = variables
        self.sources = sources
        self.macros: list[tuple[Path, Template]] = []
        self.templates: dict[str, Template] = {}  # model text -> compiled (rendered twice)
        for path in macro_files:
            text = read_utf8(path)
            try:
                self.macros.append((path, self.env.from_string(text)))
            except TemplateSyntaxError as err:
                raise ConfigError(
                    f"macro file does not parse: {err.message}", path=path, line=err.lineno
                ) from None
            except SyntaxError as err:
                raise _python_syntax_error(err, path, text) from None

    def var(self, name: str, default: Any = None) -> Any:
        if name in self.variables:
            return self.variables[name]
        if default is None:
            raise ConfigError(
                f"var('{name}') is not defined; set it in [tool.lakewide.vars] "
                "or with --vars, or give a default"
            )
        return default

    def template(self, text: str) -> Template:
        """The compiled template of a model's text (compiling is most of rendering's cost)."""
        if text not in self.templates:
            self.templates[text] = self.env.from_string(text)
        return self.templates[text]

    def render(
        self,
        path: Path,
        text: str,
        *,
        resolve_ref: Callable[[str], Relation | str],
        this: Relation,
        is_incremental: bool = False,
    ) -> RenderResult:
        """Render one model; ``resolve_ref`` turns a model name into its relation."""
        result = RenderResult(sql="")

        def config(**kwargs: Any) -> str:
            result.config.update(kwargs)
            return ""

        def ref(name: str) -> str:
            result.refs.append(name)
            return str(resolve_ref(name))

        def source(source_name: str, table_name: str) -> str:
            key = (source_name, table_name)
            if key not in self.sources:
                known = ", ".join(f"{s}.{t}" for s, t in sorted(self.sources)) or "none declared"
                raise ConfigError(
                    f"source('{source_name}', '{table_name}') is not declared in "
                    f"any models/*.yml; declared: {known}"
                )
            result.sources.append(key)
            return str(self.sources[key].relation)

        context: dict[str, Any] = {
            "config": config,
            "ref": ref,
            "source": source,
            "var": self.var,
            "env_var": env_var,
            "is_incremental": lambda: is_incremental,
            "this": str(this),
        }
        for _path, template in self.macros:
            module = template.make_module(vars=context)
            context.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
        try:
            result.sql = self.template(text).render(context)
        except TemplateSyntaxError as err:
            raise ConfigError(
                f"template does not parse: {err.message}", path=path, line=err.lineno
            ) from None
        except SyntaxError as err:  # jinja compiles to Python: e.g. a repeated keyword
            raise _python_syntax_error(err, path, text) from None
        except LakewideError as err:
            err.path = err.path or path
            raise
        except (TemplateError, TypeError) as err:
            raise ConfigError(f"template failed to render: {err}", path=path) from None
        match = _CONFIG_CALL.search(text)
        if match:
            result.config_line = text.count("\n", 0, match.start()) + 1
        return result


_REPEATED = re.compile(r"keyword argument repeated: (\w+)")


def _python_syntax_error(err: SyntaxError, path: Path, text: str) -> ConfigError:
    """A jinja call Python refuses (jinja compiles templates to Python), with the file's line.

    The generated code's line number means nothing to users: for a repeated keyword the line
    is the second ``name=`` of that keyword in the file.
    """
    repeated = _REPEATED.search(str(err.msg))
    if repeated is None:
        return ConfigError(f"template does not compile: {err.msg}", path=path)
    name = repeated.group(1)
    uses = list(re.finditer(rf"\b{name}\s*=(?!=)", text))
    line = text.count("\n", 0, uses[1].start()) + 1 if len(uses) > 1 else None
    return ConfigError(
        f"keyword '{name}' is given twice in one call (e.g. config(...)); give each keyword once",
        path=path,
        line=line,
        key=name,
    )
