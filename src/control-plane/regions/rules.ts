/** Regions the emulator offers (the public list of Neon regions); the first default. */
export const REGIONS = [
  { region_id: "aws-us-east-2", name: "AWS US East 2 (Ohio)", geo_lat: "39.9612", geo_long: "-82.9988" },
  {
    region_id: "aws-us-east-1",
    name: "AWS US East 1 (N. Virginia)",
    geo_lat: "38.9940",
    geo_long: "-77.4483",
  },
  { region_id: "aws-us-west-2", name: "AWS US West 2 (Oregon)", geo_lat: "45.5152", geo_long: "-122.6784" },
  {
    region_id: "aws-eu-central-1",
    name: "AWS Europe Central 1 (Frankfurt)",
    geo_lat: "50.1109",
    geo_long: "8.6821",
  },
  { region_id: "aws-eu-west-2", name: "AWS Europe West 2 (London)", geo_lat: "51.5072", geo_long: "-0.1276" },
  {
    region_id: "aws-ap-southeast-1",
    name: "AWS Asia Pacific 1 (Singapore)",
    geo_lat: "1.3521",
    geo_long: "103.8198",
  },
  {
    region_id: "aws-ap-southeast-2",
    name: "AWS Asia Pacific 2 (Sydney)",
    geo_lat: "-33.8688",
    geo_long: "151.2093",
  },
  {
    region_id: "aws-sa-east-1",
    name: "AWS South America East 1 (São Paulo)",
    geo_lat: "-23.5558",
    geo_long: "-46.6396",
  },
  {
    region_id: "azure-eastus2",
    name: "Azure East US 2 (Virginia)",
    geo_lat: "36.6681",
    geo_long: "-78.3889",
  },
  {
    region_id: "azure-westus3",
    name: "Azure West US 3 (Arizona)",
    geo_lat: "33.4484",
    geo_long: "-112.0740",
  },
  {
    region_id: "azure-gwc",
    name: "Azure Germany West Central (Frankfurt)",
    geo_lat: "50.1109",
    geo_long: "8.6821",
  },
] as const;

export const DEFAULT_REGION = "aws-us-east-2";
export const REGION_IDS: readonly string[] = REGIONS.map((r) => r.region_id);

/** `aws-us-east-2` -> `us-east-2.aws`, the form Neon host names use. */
export function regionHostPart(regionId: string): string {
  const dash = regionId.indexOf("-");
  return `${regionId.slice(dash + 1)}.${regionId.slice(0, dash)}`;
}

export function proxyHost(regionId: string, domain: string): string {
  return `${regionHostPart(regionId)}.${domain}`;
}

export function endpointHost(endpointId: string, regionId: string, domain: string): string {
  return `${endpointId}.${proxyHost(regionId, domain)}`;
}
