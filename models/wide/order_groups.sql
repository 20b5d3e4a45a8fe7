{{ config(merge_engine='partial_update', primary_key='order_id',
          sequence_groups={'info_time': ['product_type', 'plat_name', 'create_time',
                                         'order_status'],
                           'address_time': ['start_city_name', 'end_city_name']},
          tags=['wide']) }}
-- order_detail's two sources as sequence groups (Paimon's fields.<seq>.sequence-group): each
-- source's columns move together, ordered by that source's own binlog_time. A record older
-- than its group's stored sequence changes nothing of that group, whatever the other source
-- does; a newer one replaces the whole group, NULLs included.
SELECT order_id, product_type, plat_name, create_time, order_status,
       binlog_time AS info_time,
       CAST(NULL AS STRING) AS start_city_name, CAST(NULL AS STRING) AS end_city_name,
       CAST(NULL AS TIMESTAMP) AS address_time
FROM {{ source('ods', 'order_info') }}
UNION ALL
SELECT order_id, CAST(NULL AS STRING), CAST(NULL AS STRING), CAST(NULL AS TIMESTAMP),
       CAST(NULL AS INT), CAST(NULL AS TIMESTAMP),
       start_city_name, end_city_name, binlog_time
FROM {{ source('ods', 'order_address') }}
