# The transports the benchmarks and the corpus recordings run on, as mpirun
# options (sourced; word-split them into an array): one list, so that the
# paths a bench compares are those the corpus was recorded on.
# shellcheck disable=SC2034
TRANSPORT_SHM="--mca pml ob1 --mca btl self,vader"
# shellcheck disable=SC2034
TRANSPORT_TCP_LO="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
# shellcheck disable=SC2034
TRANSPORT_UCX="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
