{# not_owned('STRING') -> CAST(NULL AS STRING): "this source does not own this column". #}
{% macro not_owned(type) -%}
CAST(NULL AS {{ type }})
{%- endmacro %}
