// The part of Apache Storm 2.8's Nimbus service that heronbridge serves: the calls
// `sparse` (streamparse) and Storm's own command classes make, and the structures they
// carry. Field ids, types and method names are Storm's wire contract (storm-client's
// storm.thrift); only what the endpoint reads or answers is declared, so a client's
// field this file leaves out is skipped on reading, and a method it leaves out is
// answered with Thrift's "Invalid method name", as any server answers an unknown call.
// streamparse bundles Storm 1.1.1's IDL: every call and field it uses has the same id
// and type here (2.8 dropped ClusterSummary field 2, which its client does not require).

// ---- the topology as a client submits it ----------------------------------------

union JavaObjectArg {
  1: i32 int_arg;
  2: i64 long_arg;
  3: string string_arg;
  4: bool bool_arg;
  5: binary binary_arg;
  6: double double_arg;
}

struct JavaObject {
  1: required string full_class_name;
  2: required list<JavaObjectArg> args_list;
}

struct NullStruct {}

struct GlobalStreamId {
  1: required string componentId;
  2: required string streamId;
}

// Exactly one member is set; `fields` empty means global grouping.
union Grouping {
  1: list<string> fields;
  2: NullStruct shuffle;
  3: NullStruct all;
  4: NullStruct none;
  5: NullStruct direct;
  6: JavaObject custom_object;
  7: binary custom_serialized;
  8: NullStruct local_or_shuffle;
}

struct StreamInfo {
  1: required list<string> output_fields;
  2: required bool direct;
}

// A multilang component: Storm runs [execution_command, script] in resources/.
struct ShellComponent {
  1: string execution_command;
  2: string script;
}

union ComponentObject {
  1: binary serialized_java;
  2: ShellComponent shell;
  3: JavaObject java_object;
}

struct ComponentCommon {
  1: required map<GlobalStreamId, Grouping> inputs;
  2: required map<string, StreamInfo> streams;
  3: optional i32 parallelism_hint;
  4: optional string json_conf;
}

struct SpoutSpec {
  1: required ComponentObject spout_object;
  2: required ComponentCommon common;
}

struct Bolt {
  1: required ComponentObject bolt_object;
  2: required ComponentCommon common;
}

struct StateSpoutSpec {
  1: required ComponentObject state_spout_object;
  2: required ComponentCommon common;
}

struct StormTopology {
  1: required map<string, SpoutSpec> spouts;
  2: required map<string, Bolt> bolts;
  3: required map<string, StateSpoutSpec> state_spouts;
  4: optional list<binary> worker_hooks;
  5: optional list<string> dependency_jars;
  6: optional list<string> dependency_artifacts;
  7: optional string storm_version;
  8: optional string jdk_version;
}

// ---- what Nimbus raises --------------------------------------------------------

exception AlreadyAliveException {
  1: required string msg;
}

exception NotAliveException {
  1: required string msg;
}

exception AuthorizationException {
  1: required string msg;
}

exception InvalidTopologyException {
  1: required string msg;
}

exception KeyNotFoundException {
  1: required string msg;
}

exception IllegalStateException {
  1: required string msg;
}

exception KeyAlreadyExistsException {
  1: required string msg;
}

// ---- options of the calls ------------------------------------------------------

struct KillOptions {
  1: optional i32 wait_secs;
}

struct RebalanceOptions {
  1: optional i32 wait_secs;
  2: optional i32 num_workers;
  3: optional map<string, i32> num_executors;
  4: optional map<string, map<string, double>> topology_resources_overrides;
  5: optional string topology_conf_overrides;
  6: optional string principal;
}

struct Credentials {
  1: required map<string, string> creds;
  2: optional string topoOwner;
}

enum TopologyInitialStatus {
  ACTIVE = 1,
  INACTIVE = 2
}

struct SubmitOptions {
  1: required TopologyInitialStatus initial_status;
  2: optional Credentials creds;
}

enum NumErrorsChoice {
  ALL,
  NONE,
  ONE
}

struct GetInfoOptions {
  1: optional NumErrorsChoice num_err_choice;
}

// ---- what Nimbus reports -------------------------------------------------------

struct TopologySummary {
  1: required string id;
  2: required string name;
  3: required i32 num_tasks;
  4: required i32 num_executors;
  5: required i32 num_workers;
  6: required i32 uptime_secs;
  7: required string status;
  8: optional string storm_version;
  9: optional string topology_version;
  513: optional string sched_status;
  514: optional string owner;
  515: optional i32 replication_count;
}

struct SupervisorSummary {
  1: required string host;
  2: required i32 uptime_secs;
  3: required i32 num_workers;
  4: required i32 num_used_workers;
  5: required string supervisor_id;
  6: optional string version = "VERSION_NOT_PROVIDED";
  12: optional bool blacklisted;
}

struct NimbusSummary {
  1: required string host;
  2: required i32 port;
  3: required i32 uptime_secs;
  4: required bool isLeader;
  5: required string version;
  6: optional i32 tlsPort;
}

struct ClusterSummary {
  1: required list<SupervisorSummary> supervisors;
  3: required list<TopologySummary> topologies;
  4: required list<NimbusSummary> nimbuses;
}

struct ErrorInfo {
  1: required string error;
  2: required i32 error_time_secs;
  3: optional string host;
  4: optional i32 port;
}

struct ExecutorInfo {
  1: required i32 task_start;
  2: required i32 task_end;
}

struct ExecutorSummary {
  1: required ExecutorInfo executor_info;
  2: required string component_id;
  3: required string host;
  4: required i32 port;
  5: required i32 uptime_secs;
}

struct TopologyInfo {
  1: required string id;
  2: required string name;
  3: required i32 uptime_secs;
  4: required list<ExecutorSummary> executors;
  5: required string status;
  6: required map<string, list<ErrorInfo>> errors;
  8: optional string storm_version;
  513: optional string sched_status;
  514: optional string owner;
  515: optional i32 replication_count;
}

// `storm set_log_level`: levels of named loggers, each until an optional timeout.
enum LogLevelAction {
  UNCHANGED = 1,
  UPDATE = 2,
  REMOVE = 3
}

struct LogLevel {
  1: required LogLevelAction action;
  2: optional string target_log_level;
  3: optional i32 reset_log_level_timeout_secs;
  4: optional i64 reset_log_level_timeout_epoch;
  5: optional string reset_log_level;
}

struct LogConfig {
  2: optional map<string, LogLevel> named_logger_level;
}

// ---- the blob store (`storm jar --jars/--artifacts`, `storm blobstore`) ------------

enum AccessControlType {
  OTHER = 1,
  USER = 2
}

struct AccessControl {
  1: required AccessControlType type;
  2: optional string name;
  3: required i32 access;  // READ=0x1, WRITE=0x2, ADMIN=0x4
}

struct SettableBlobMeta {
  1: required list<AccessControl> acl;
  2: optional i32 replication_factor;
}

struct ReadableBlobMeta {
  1: required SettableBlobMeta settable;
  2: required i64 version;
}

struct ListBlobsResult {
  1: required list<string> keys;
  2: required string session;
}

struct BeginDownloadResult {
  1: required i64 version;
  2: required string session;
  3: optional i64 data_size;
}

// ---- the service ---------------------------------------------------------------

service Nimbus {
  void submitTopology(1: string name, 2: string uploadedJarLocation, 3: string jsonConf,
                      4: StormTopology topology)
    throws (1: AlreadyAliveException e, 2: InvalidTopologyException ite,
            3: AuthorizationException aze);
  void submitTopologyWithOpts(1: string name, 2: string uploadedJarLocation,
                              3: string jsonConf, 4: StormTopology topology,
                              5: SubmitOptions options)
    throws (1: AlreadyAliveException e, 2: InvalidTopologyException ite,
            3: AuthorizationException aze);
  void killTopology(1: string name)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  void killTopologyWithOpts(1: string name, 2: KillOptions options)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  void activate(1: string name)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  void deactivate(1: string name)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  void rebalance(1: string name, 2: RebalanceOptions options)
    throws (1: NotAliveException e, 2: InvalidTopologyException ite,
            3: AuthorizationException aze);

  string beginFileUpload() throws (1: AuthorizationException aze);
  void uploadChunk(1: string location, 2: binary chunk) throws (1: AuthorizationException aze);
  void finishFileUpload(1: string location) throws (1: AuthorizationException aze);

  string beginCreateBlob(1: string key, 2: SettableBlobMeta meta)
    throws (1: AuthorizationException aze, 2: KeyAlreadyExistsException kae);
  string beginUpdateBlob(1: string key)
    throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  void uploadBlobChunk(1: string session, 2: binary chunk)
    throws (1: AuthorizationException aze);
  void finishBlobUpload(1: string session) throws (1: AuthorizationException aze);
  void cancelBlobUpload(1: string session) throws (1: AuthorizationException aze);
  ReadableBlobMeta getBlobMeta(1: string key)
    throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  void setBlobMeta(1: string key, 2: SettableBlobMeta meta)
    throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  BeginDownloadResult beginBlobDownload(1: string key)
    throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  binary downloadBlobChunk(1: string session) throws (1: AuthorizationException aze);
  void deleteBlob(1: string key)
    throws (1: AuthorizationException aze, 2: KeyNotFoundException knf,
            3: IllegalStateException ise);
  ListBlobsResult listBlobs(1: string session);
  i32 getBlobReplication(1: string key)
    throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  i32 updateBlobReplication(1: string key, 2: i32 replication)
    throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  void createStateInZookeeper(1: string key);
  bool isRemoteBlobExists(1: string blobKey) throws (1: AuthorizationException aze);

  string getNimbusConf() throws (1: AuthorizationException aze);
  ClusterSummary getClusterInfo() throws (1: AuthorizationException aze);
  list<TopologySummary> getTopologySummaries() throws (1: AuthorizationException aze);
  TopologySummary getTopologySummaryByName(1: string name)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologySummary getTopologySummary(1: string id)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  NimbusSummary getLeader() throws (1: AuthorizationException aze);
  bool isTopologyNameAllowed(1: string name) throws (1: AuthorizationException aze);
  TopologyInfo getTopologyInfoByName(1: string name)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyInfo getTopologyInfo(1: string id)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyInfo getTopologyInfoByNameWithOpts(1: string name, 2: GetInfoOptions options)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyInfo getTopologyInfoWithOpts(1: string id, 2: GetInfoOptions options)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  string getTopologyConf(1: string id)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  StormTopology getTopology(1: string id)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  StormTopology getUserTopology(1: string id)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  void setLogConfig(1: string name, 2: LogConfig config);
  void debug(1: string name, 2: string component, 3: bool enable, 4: double samplingPercentage)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
}
