"""Jinja rendering of models.

The context: config(), ref(), source(), var(), env_var(), is_incremental(), this.
"""

from __future__ import annotations

import hashlib
import marshal
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2
from jinja2 import Environment, StrictUndefined, Template, TemplateError, TemplateSyntaxError

from lakewide.project.nodes import Relation
from lakewide.project.profiles_file import env_var
from lakewide.project.sources import Source
from lakewide.project.text_files import read_utf8
from lakewide.project.union_sources import SourceText, union_sources
from lakewide.project.user_cache import cache_folder, write_entry
from lakewide.vocabulary.errors import ConfigError, LakewideError

_CONFIG_CALL = re.compile(r"\bconfig\s*\(")
# what a template's compiled code depends on besides its text: Python, jinja and this module
_CODE_KEY = (
    f"{sys.version}\0{jinja2.__version__}\0"
    + hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
)


def template_cache() -> Path:
    """Where compiled templates are kept between processes (``user_cache``)."""
    return cache_folder("templates")


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
        cache: Path | None = None,
    ) -> None:
        """``cache``: a folder keeping each template's compiled code for the next process."""
        self.env = Environment(undefined=StrictUndefined, keep_trailing_newline=True)
        self.cache = cache
        self.variables = variables
        self.sources = sources
        self.macros: list[tuple[Path, Template]] = []
        # (file, text) -> compiled (a model is rendered twice)
        self.templates: dict[tuple[str, str], Template] = {}
        for path in macro_files:
            text = read_utf8(path)
            try:
                self.macros.append((path, self.template(path, text)))
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

    def template(self, path: Path, text: str) -> Template:
        """The compiled template of a file's text (compiling is most of rendering's cost),
        named after the file so that a runtime error's traceback names it and its line."""
        key = (str(path), text)
        if key not in self.templates:
            code = self._code(path, text)
            globals_ = self.env.make_globals(None)
            self.templates[key] = self.env.template_class.from_code(self.env, code, globals_, None)
        return self.templates[key]

    def _code(self, path: Path, text: str) -> CodeType:
        """The template's code, compiled by jinja (most of rendering's cost) or read from the
        cache folder where an earlier process left it."""
        if self.cache is None:
            return self.env.compile(text, name=str(path), filename=str(path))
        digest = hashlib.sha256(f"{_CODE_KEY}\0{path}\0{text}".encode()).hexdigest()
        stored = self.cache / f"{digest}.code"
        try:
            code = marshal.loads(stored.read_bytes())
            if isinstance(code, CodeType):
                return code
        except (OSError, ValueError, EOFError, TypeError):
            pass  # not cached yet (or unreadable): compiled again
        code = self.env.compile(text, name=str(path), filename=str(path))
        write_entry(stored, marshal.dumps(code))
        return code

    def _modules(self, context: dict[str, Any]) -> None:
        """Add the macros of every macro file to ``context``; a runtime error's traceback
        is rewritten to the macro file's lines (jinja does so for render, not make_module)."""
        for _path, template in self.macros:
            try:
                module = template.make_module(vars=context)
            except Exception:  # noqa: BLE001 - handle_exception re-raises it, rewritten
                self.env.handle_exception()
            context.update({k: v for k, v in vars(module).items() if not k.startswith("_")})

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
            return SourceText.of(self.sources[key])

        context: dict[str, Any] = {
            "config": config,
            "ref": ref,
            "source": source,
            "var": self.var,
            "env_var": env_var,
            "is_incremental": lambda: is_incremental,
            "this": str(this),
            "lakewide": MACROS,
        }
        try:
            self._modules(context)
            result.sql = self.template(path, text).render(context)
        except TemplateSyntaxError as err:
            raise ConfigError(
                f"template does not parse: {err.message}", path=path, line=err.lineno
            ) from None
        except SyntaxError as err:  # jinja compiles to Python: e.g. a repeated keyword
            raise _python_syntax_error(err, path, text) from None
        except LakewideError as err:
            err.path = err.path or path
            raise
        except Exception as err:  # noqa: BLE001 - any error of the template's own code
            raise self._failed(err, path) from None
        match = _CONFIG_CALL.search(text)
        if match:
            result.config_line = text.count("\n", 0, match.start()) + 1
        return result

    def _failed(self, err: Exception, path: Path) -> ConfigError:
        """A template's runtime error (``{{ 1 // 0 }}``, an undefined name, a bad call) named
        by the model or macro file and line it happened in (the innermost one)."""
        files = {str(p): p for p, _ in self.macros}
        files[str(path)] = path
        where, line = path, None
        frame = err.__traceback__
        while frame is not None:
            name = frame.tb_frame.f_code.co_filename
            if name in files:
                where, line = files[name], frame.tb_lineno
            frame = frame.tb_next
        what = str(err) if isinstance(err, TemplateError) else f"{type(err).__name__}: {err}"
        return ConfigError(f"template failed to render: {what}", path=where, line=line)


class _Macros:
    """The macros lakewide ships, available in every model as ``lakewide.<name>``."""

    union_sources = staticmethod(union_sources)


MACROS = _Macros()

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
