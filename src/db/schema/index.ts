export * from "./accounts.js";
export * from "./api-keys.js";
export * from "./branches.js";
export * from "./emulator.js";
export * from "./endpoints.js";
export * from "./operations.js";
export * from "./projects.js";
export * from "./roles-databases.js";
