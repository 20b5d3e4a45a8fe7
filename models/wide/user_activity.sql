{{ config(merge_engine='aggregation', primary_key='user_id', sequence_field='event_time',
          aggregates={'events': 'sum', 'total_amount': 'sum', 'max_amount': 'max',
                      'last_page': 'last_non_null_value',
                      'pages': {'function': 'listagg', 'delimiter': ' > '},
                      'first_seen': 'min', 'used_mobile': 'bool_or'},
          tags=['wide']) }}
-- Per-user counters kept by the aggregation merge engine (Paimon's merge-engine=aggregation):
-- each run folds only the new events into the stored counters.
SELECT user_id,
       1 AS events,
       CAST(amount AS DOUBLE) AS total_amount,
       CAST(amount AS DOUBLE) AS max_amount,
       page AS last_page,
       page AS pages,
       event_time AS first_seen,
       CAST(is_mobile AS BOOLEAN) AS used_mobile,
       event_time
FROM {{ source('ods', 'user_events') }}
