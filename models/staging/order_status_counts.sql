{{ config(materialized='table') }}
-- A plain table downstream of the wide table.
SELECT order_status, COUNT(*) AS orders
FROM {{ ref('order_detail') }}
GROUP BY order_status
