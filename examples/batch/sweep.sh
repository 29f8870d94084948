# The sweep that the batch jobs run, split into SHARDS shards: sourced by run-shard.sh and
# merge.sh. Edit it to define your own; every shard and the merge must see the same values.
SCENARIO=sweep-drift-boundary
VARY=(--vary T=5s,10s,20s --vary epsilon=1ms,2ms,5ms,10ms,20ms --vary rho=100,500,2000)
SEEDS=${SEEDS:-200}
SHARDS=${SHARDS:-8}
