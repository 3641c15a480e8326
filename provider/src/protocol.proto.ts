// The subset of Terraform plugin protocol 6 (package tfplugin6) this provider speaks, plus the two
// go-plugin services (controller, health) OpenTofu calls. Field numbers follow the public protocol
// description; messages and RPCs the provider never uses (functions, data sources, moves) are left
// out, which gRPC answers with UNIMPLEMENTED.
export const PROTOCOL_PROTO = `
syntax = "proto3";
package tfplugin6;

message DynamicValue { bytes msgpack = 1; bytes json = 2; }

message AttributePath {
  message Step {
    oneof selector {
      string attribute_name = 1;
      string element_key_string = 2;
      int64 element_key_int = 3;
    }
  }
  repeated Step steps = 1;
}

message Diagnostic {
  enum Severity { INVALID = 0; ERROR = 1; WARNING = 2; }
  Severity severity = 1;
  string summary = 2;
  string detail = 3;
  AttributePath attribute = 4;
}

enum StringKind { PLAIN = 0; MARKDOWN = 1; }

message Schema {
  message Block {
    int64 version = 1;
    repeated Attribute attributes = 2;
    string description = 4;
    StringKind description_kind = 5;
    bool deprecated = 6;
  }
  message Attribute {
    string name = 1;
    bytes type = 2;
    string description = 3;
    bool required = 4;
    bool optional = 5;
    bool computed = 6;
    bool sensitive = 7;
    StringKind description_kind = 8;
    bool deprecated = 9;
    Object nested_type = 10;
  }
  message Object {
    enum NestingMode { INVALID = 0; SINGLE = 1; LIST = 2; SET = 3; MAP = 4; }
    repeated Attribute attributes = 1;
    NestingMode nesting = 3;
  }
  int64 version = 1;
  Block block = 2;
}

message ServerCapabilities {
  bool plan_destroy = 1;
  bool get_provider_schema_optional = 2;
}

message RawState { bytes json = 1; map<string, string> flatmap = 2; }

message GetMetadata {
  message Request {}
  message ResourceMetadata { string type_name = 1; }
  message Response {
    ServerCapabilities server_capabilities = 1;
    repeated Diagnostic diagnostics = 2;
    repeated ResourceMetadata resources = 4;
  }
}

message GetProviderSchema {
  message Request {}
  message Response {
    Schema provider = 1;
    map<string, Schema> resource_schemas = 2;
    map<string, Schema> data_source_schemas = 3;
    repeated Diagnostic diagnostics = 4;
    Schema provider_meta = 5;
    ServerCapabilities server_capabilities = 6;
  }
}

message ValidateProviderConfig {
  message Request { DynamicValue config = 1; }
  message Response { repeated Diagnostic diagnostics = 2; }
}

message ValidateResourceConfig {
  message Request { string type_name = 1; DynamicValue config = 2; }
  message Response { repeated Diagnostic diagnostics = 1; }
}

message UpgradeResourceState {
  message Request { string type_name = 1; int64 version = 2; RawState raw_state = 3; }
  message Response { DynamicValue upgraded_state = 1; repeated Diagnostic diagnostics = 2; }
}

message ConfigureProvider {
  message Request { string terraform_version = 1; DynamicValue config = 2; }
  message Response { repeated Diagnostic diagnostics = 1; }
}

message ReadResource {
  message Request { string type_name = 1; DynamicValue current_state = 2; bytes private = 3; }
  message Response { DynamicValue new_state = 1; repeated Diagnostic diagnostics = 2; bytes private = 3; }
}

message PlanResourceChange {
  message Request {
    string type_name = 1;
    DynamicValue prior_state = 2;
    DynamicValue proposed_new_state = 3;
    DynamicValue config = 4;
    bytes prior_private = 5;
  }
  message Response {
    DynamicValue planned_state = 1;
    repeated AttributePath requires_replace = 2;
    bytes planned_private = 3;
    repeated Diagnostic diagnostics = 4;
  }
}

message ApplyResourceChange {
  message Request {
    string type_name = 1;
    DynamicValue prior_state = 2;
    DynamicValue planned_state = 3;
    DynamicValue config = 4;
    bytes planned_private = 5;
  }
  message Response { DynamicValue new_state = 1; bytes private = 2; repeated Diagnostic diagnostics = 3; }
}

message ImportResourceState {
  message Request { string type_name = 1; string id = 2; }
  message ImportedResource { string type_name = 1; DynamicValue state = 2; bytes private = 3; }
  message Response { repeated ImportedResource imported_resources = 1; repeated Diagnostic diagnostics = 2; }
}

message StopProvider {
  message Request {}
  message Response { string Error = 1; }
}

service Provider {
  rpc GetMetadata(GetMetadata.Request) returns (GetMetadata.Response);
  rpc GetProviderSchema(GetProviderSchema.Request) returns (GetProviderSchema.Response);
  rpc ValidateProviderConfig(ValidateProviderConfig.Request) returns (ValidateProviderConfig.Response);
  rpc ValidateResourceConfig(ValidateResourceConfig.Request) returns (ValidateResourceConfig.Response);
  rpc UpgradeResourceState(UpgradeResourceState.Request) returns (UpgradeResourceState.Response);
  rpc ConfigureProvider(ConfigureProvider.Request) returns (ConfigureProvider.Response);
  rpc ReadResource(ReadResource.Request) returns (ReadResource.Response);
  rpc PlanResourceChange(PlanResourceChange.Request) returns (PlanResourceChange.Response);
  rpc ApplyResourceChange(ApplyResourceChange.Request) returns (ApplyResourceChange.Response);
  rpc ImportResourceState(ImportResourceState.Request) returns (ImportResourceState.Response);
  rpc StopProvider(StopProvider.Request) returns (StopProvider.Response);
}
`;

/** go-plugin's controller (Shutdown) and the standard gRPC health check it pings. */
export const PLUGIN_PROTO = `
syntax = "proto3";
package plugin;
message Empty {}
service GRPCController { rpc Shutdown(Empty) returns (Empty); }
`;

export const HEALTH_PROTO = `
syntax = "proto3";
package grpc.health.v1;
message HealthCheckRequest { string service = 1; }
message HealthCheckResponse {
  enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }
  ServingStatus status = 1;
}
service Health { rpc Check(HealthCheckRequest) returns (HealthCheckResponse); }
`;
