import { readFileSync } from 'node:fs';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
for (const file of process.argv.slice(3)) {
const fd = fromBinary(FileDescriptorProtoSchema, readFileSync(file));
const want = new Set(process.argv[2].split(','));
for (const m of fd.messageType) {
  if (!want.has(m.name)) continue;
  console.log(m.name);
  for (const f of m.field) console.log('  ', f.number, f.name, f.jsonName, f.type, f.typeName ?? '', f.options?.$unknown?.map(u=>u.no+':'+Buffer.from(u.data).toString()).join(' ') ?? '');
}}
