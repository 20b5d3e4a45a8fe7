-- A singular data test: the rows it returns are failures. Every order is counted once.
SELECT counted.orders, detail.orders AS detail_orders
FROM (SELECT SUM(orders) AS orders FROM {{ ref('order_status_counts') }}) AS counted
CROSS JOIN (SELECT COUNT(*) AS orders FROM {{ ref('order_detail') }}) AS detail
WHERE counted.orders <> detail.orders
