#!/usr/bin/env sysbench
-- Batched key lookup, as RonDB's key-lookup benchmark: each event is one
-- SELECT id, k, c, pad FROM sbtestN WHERE id IN (<batch_keys random ids>)
-- on the tables of sysbench's oltp_common (prepare them with any oltp_* workload).
-- A throughput of T events/s reads T * batch_keys rows/s.

require("oltp_common")

sysbench.cmdline.options.batch_keys =
   {"Keys per SELECT ... WHERE id IN (...)", 100}

function prepare_statements()
   -- Plain statements: the IN list is built per event (keys differ every time).
end

function event()
   local table_no = sysbench.rand.uniform(1, sysbench.opt.tables)
   local keys = {}
   for i = 1, sysbench.opt.batch_keys do
      keys[i] = sysbench.rand.default(1, sysbench.opt.table_size)
   end
   con:query(string.format("SELECT id, k, c, pad FROM sbtest%d WHERE id IN (%s)",
                           table_no, table.concat(keys, ",")))
end
