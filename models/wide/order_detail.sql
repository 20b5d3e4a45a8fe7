{{ config(merge_engine='partial_update', primary_key=['order_id'],
          sequence_field='binlog_time', partition_by=['bucket(4, order_id)'],
          tags=['wide']) }}
-- Paimon's order_info + order_address -> order_detail, ordered by binlog_time.
SELECT order_id, product_type, plat_name, ref_id,
       CAST(NULL AS STRING) AS start_city_name, CAST(NULL AS STRING) AS end_city_name,
       create_time, order_status, binlog_time
FROM {{ source('ods', 'order_info') }}
UNION ALL
SELECT order_id, CAST(NULL AS STRING), CAST(NULL AS STRING), CAST(NULL AS BIGINT),
       start_city_name, end_city_name, CAST(NULL AS TIMESTAMP), CAST(NULL AS INT), binlog_time
FROM {{ source('ods', 'order_address') }}
