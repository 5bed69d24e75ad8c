import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

/** What {@link issueLeaf} writes: `<dir>/<name>.crt` and `<dir>/<name>.key`. */
export interface LeafFiles {
  readonly cert: string;
  readonly key: string;
}

/** The certificate to issue: subject CN, subjectAltName entries (`DNS:x`, `IP:y`), extended key usages. */
export interface LeafSpec {
  readonly name: string;
  readonly commonName: string;
  readonly subjectAltNames: readonly string[];
  readonly extendedKeyUsage: readonly ("serverAuth" | "clientAuth")[];
}

/**
 * Issues one EC P-256 leaf certificate signed by `ca` into `dir` with the `openssl` CLI: client certificates
 * with or without the SAN a server expects, and fresh server certificates for rotation tests.
 */
export async function issueLeaf(
  dir: string,
  ca: { readonly cert: string; readonly key: string },
  spec: LeafSpec,
): Promise<LeafFiles> {
  const file = (suffix: string) => join(dir, `${spec.name}.${suffix}`);
  const extensions = [
    "basicConstraints=critical,CA:FALSE",
    "keyUsage=critical,digitalSignature",
    `extendedKeyUsage=${spec.extendedKeyUsage.join(",")}`,
    ...(spec.subjectAltNames.length > 0 ? [`subjectAltName=${spec.subjectAltNames.join(",")}`] : []),
  ];
  await writeFile(file("ext"), `${extensions.join("\n")}\n`);
  const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await openssl([
    "req",
    "-new",
    ...ecKey,
    "-keyout",
    file("key"),
    "-out",
    file("csr"),
    "-subj",
    `/CN=${spec.commonName}`,
  ]);
  await openssl([
    "x509",
    "-req",
    "-in",
    file("csr"),
    "-CA",
    ca.cert,
    "-CAkey",
    ca.key,
    "-set_serial",
    `0x${randomBytes(8).toString("hex")}`,
    "-days",
    "3650",
    "-out",
    file("crt"),
    "-extfile",
    file("ext"),
  ]);
  return { cert: file("crt"), key: file("key") };
}

function openssl(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("openssl", args, { timeout: 20_000 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`openssl ${args[0]} failed: ${error.message}\n${stderr}`));
      else resolve();
    });
  });
}
