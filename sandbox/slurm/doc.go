// Package slurm runs experiments on a Slurm cluster, one experiment per
// batch job, with the same receipts and guarantees as a local run.
//
// # Host side
//
// [Cluster.Run] stages the experiment in the shared folder every node sees
// (SHARED_DIR/jobs/<job key>/: spec.json, the sealed inputs, job.sh and a
// heartbeat file), submits it with `sbatch --parsable` (--cpus-per-task,
// --mem, --time = timeout + margin, --job-name = the job key, output and
// error files in the job folder), and waits for the job's terminal record.
// One poller per cluster runs a single batched `squeue` (then `sacct` for
// ids squeue has forgotten) for every job still queued or running, with
// backoff and a bounded rate, touches their heartbeat files and reports
// queued/running with the node. A job that ends without a record is
// interpreted from its scheduler state (TIMEOUT → timed_out, an outside
// scancel → cancelled, anything else or a vanished job → interrupted, each
// with its reason). Cancelling Run's context runs `scancel`. Run is
// idempotent per job key: after a supervisor restart it picks up the record
// of a finished job, or re-attaches to the queued or running one.
//
// Where the cluster is reached is two small interfaces of the [Config]:
// [Commander] runs the Slurm clients and [Files] reaches SHARED_DIR. Their
// defaults ([Local], [LocalFiles]) are this host's; sandbox/machine gives
// a login node's, over SSH.
//
// # Node side
//
// The job runs this binary (shipped to SHARED_DIR/bin/simjecture-<sha256>) in the
// hidden mode [JobArg]: [JobMain] probes the study's execution backend on
// the node (unavailable: the experiment fails with the probe's reason and
// is never run weaker), runs the experiment through sandbox.Run with its
// outputs collected into the job folder, stops it on SIGTERM (scancel, the
// time limit) or when the supervisor's heartbeat is older than the grace,
// and writes record.json atomically. The host copies the outputs into the
// campaign, checking every hash against the record.
package slurm
