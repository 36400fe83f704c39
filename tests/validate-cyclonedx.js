// validate-cyclonedx.js FILE: check a CycloneDX 1.5 JSON document against
// the CycloneDX schema with CycloneDX's own JavaScript library, and every
// license expression in it with spdx-expression-parse.  Modules come from
// NODE_PATH (tests/test-sbom.sh installs pinned versions there).
'use strict';
const fs = require('fs');
const CDX = require('@cyclonedx/cyclonedx-library');
const parseSpdx = require('spdx-expression-parse');

const text = fs.readFileSync(process.argv[2], 'utf8');
const validator = new CDX.Validation.JsonStrictValidator(CDX.Spec.Version.v1dot5);
validator.validate(text).then((problems) => {
  if (problems !== null) {
    console.error('not valid CycloneDX 1.5: ' + JSON.stringify(problems));
    process.exit(1);
  }
  for (const c of JSON.parse(text).components || []) {
    for (const l of c.licenses || []) {
      if (l.expression !== undefined) {
        try {
          parseSpdx(l.expression);
        } catch (e) {
          console.error(c.name + ': not an SPDX expression: ' + l.expression);
          process.exit(1);
        }
      }
    }
  }
  console.log('valid');
}, (e) => {
  console.error('validator failed: ' + e);
  process.exit(2);
});
