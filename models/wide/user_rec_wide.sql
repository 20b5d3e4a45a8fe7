{{ config(merge_engine='partial_update', primary_key=['user_id', 'item_id'],
          tags=['wide']) }}
-- One row per (user, item); each source fills only its own columns (Fluss/Paimon partial update).
SELECT user_id, item_id, rec_score,
       {{ not_owned('INT') }} AS imp_cnt, {{ not_owned('INT') }} AS click_cnt
FROM {{ source('ods', 'recommendations') }}
UNION ALL
SELECT user_id, item_id, {{ not_owned('DOUBLE') }}, imp_cnt, {{ not_owned('INT') }}
FROM {{ source('ods', 'impressions') }}
UNION ALL
SELECT user_id, item_id, {{ not_owned('DOUBLE') }}, {{ not_owned('INT') }}, click_cnt
FROM {{ source('ods', 'clicks') }}
