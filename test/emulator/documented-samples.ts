/**
 * The documented sample documents of the HCP Terraform / Terraform Enterprise private registry API, transcribed
 * verbatim so that the emulator's answers can be compared with them without reading anything outside this
 * repository. Each constant names the page and the sample it comes from. Source pages (HashiCorp's
 * `terraform-docs-common`, `website/docs/cloud-docs/api-docs/...`, same content on developer.hashicorp.com):
 * - "Provider versions and platforms": `private-registry/provider-versions-platforms.mdx`
 * - "Registry providers": `private-registry/providers.mdx`
 * - "GPG keys": `private-registry/gpg-keys.mdx`
 * - "API docs overview": `api-docs/index.mdx` (authentication, pagination, rate limiting)
 *
 * Only whitespace differs from the docs; `as const` keeps the literal types for readers. Nothing here is
 * tuned to the emulator: where a sample is partial the comment says how the full document was assembled.
 */

/** HCP Terraform API docs, Private registry › Provider versions and platforms, "Create a provider version" sample payload. */
export const VERSION_CREATE_PAYLOAD = {
  data: {
    type: 'registry-provider-versions',
    attributes: {
      version: '3.1.1',
      'key-id': '32966F3FB5AC1129',
      protocols: ['5.0'],
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › Provider versions and platforms, "Create a provider version" sample response (201). */
export const VERSION_CREATE_RESPONSE = {
  data: {
    id: 'provver-y5KZUsSBRLV9zCtL',
    type: 'registry-provider-versions',
    attributes: {
      version: '3.1.1',
      'created-at': '2022-02-11T19:16:59.876Z',
      'updated-at': '2022-02-11T19:16:59.876Z',
      'key-id': '32966F3FB5AC1129',
      protocols: ['5.0'],
      permissions: {
        'can-delete': true,
        'can-upload-asset': true,
      },
      'shasums-uploaded': false,
      'shasums-sig-uploaded': false,
    },
    relationships: {
      'registry-provider': {
        data: {
          id: 'prov-cmEmLstBfjNNA9F3',
          type: 'registry-providers',
        },
      },
      platforms: {
        data: [],
        links: {
          related:
            '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws/versions/3.1.1/platforms',
        },
      },
    },
    links: {
      'shasums-upload': 'https://archivist.terraform.io/v1/object/dmF1b...',
      'shasums-sig-upload': 'https://archivist.terraform.io/v1/object/dmF1b...',
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › Provider versions and platforms, "Get all versions for a single provider" sample response (200). */
export const VERSION_LIST_RESPONSE = {
  data: [
    {
      id: 'provver-y5KZUsSBRLV9zCtL',
      type: 'registry-provider-versions',
      attributes: {
        version: '3.1.1',
        'created-at': '2022-02-11T19:16:59.876Z',
        'updated-at': '2022-02-11T19:16:59.876Z',
        'key-id': '32966F3FB5AC1129',
        protocols: ['5.0'],
        permissions: {
          'can-delete': true,
          'can-upload-asset': true,
        },
        'shasums-uploaded': true,
        'shasums-sig-uploaded': true,
      },
      relationships: {
        'registry-provider': {
          data: {
            id: 'prov-cmEmLstBfjNNA9F3',
            type: 'registry-providers',
          },
        },
        platforms: {
          data: [
            { id: 'provpltfrm-GSHhNzptr9s3WoLD', type: 'registry-provider-platforms' },
            { id: 'provpltfrm-A1PHitiM2KkKpVoM', type: 'registry-provider-platforms' },
            { id: 'provpltfrm-BLJWvWyJ2QMs525k', type: 'registry-provider-platforms' },
            { id: 'provpltfrm-qQYosUguetYtXGzJ', type: 'registry-provider-platforms' },
            { id: 'provpltfrm-pjDHFN46y193bS7t', type: 'registry-provider-platforms' },
          ],
          links: {
            related:
              '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws/versions/3.1.1/platforms',
          },
        },
      },
      links: {
        'shasums-download': 'https://archivist.terraform.io/v1/object/dmF1b...',
        'shasums-sig-download': 'https://archivist.terraform.io/v1/object/dmF1b...',
      },
    },
  ],
  links: {
    self: 'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws/versions?page%5Bnumber%5D=1&page%5Bsize%5D=20',
    first:
      'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws/versions?page%5Bnumber%5D=1&page%5Bsize%5D=20',
    prev: null,
    next: null,
    last: 'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws/versions?page%5Bnumber%5D=1&page%5Bsize%5D=20',
  },
  meta: {
    pagination: {
      'current-page': 1,
      'page-size': 20,
      'prev-page': null,
      'next-page': null,
      'total-pages': 1,
      'total-count': 1,
    },
  },
} as const;

/**
 * HCP Terraform API docs, Private registry › Provider versions and platforms, "Get a version" sample response
 * (200). The docs print the list item above wrapped as `{"data": {…}}`, with no top-level links or meta.
 */
export const VERSION_GET_RESPONSE = { data: VERSION_LIST_RESPONSE.data[0] } as const;

/**
 * HCP Terraform API docs, Private registry › Provider versions and platforms, "Create a provider platform"
 * sample payload. Note `data.type`: the sample says "registry-provider-version-platforms" although the
 * parameter table says "registry-provider-platforms"; the server accepts the sample as printed.
 */
export const PLATFORM_CREATE_PAYLOAD = {
  data: {
    type: 'registry-provider-version-platforms',
    attributes: {
      os: 'linux',
      arch: 'amd64',
      shasum: '8f69533bc8afc227b40d15116358f91505bb638ce5919712fbb38a2dec1bba38',
      filename: 'terraform-provider-aws_3.1.1_linux_amd64.zip',
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › Provider versions and platforms, "Create a provider platform" sample response (201). */
export const PLATFORM_CREATE_RESPONSE = {
  data: {
    id: 'provpltfrm-BLJWvWyJ2QMs525k',
    type: 'registry-provider-platforms',
    attributes: {
      os: 'linux',
      arch: 'amd64',
      filename: 'terraform-provider-aws_3.1.1_linux_amd64.zip',
      shasum: '8f69533bc8afc227b40d15116358f91505bb638ce5919712fbb38a2dec1bba38',
      permissions: {
        'can-delete': true,
        'can-upload-asset': true,
      },
      'provider-binary-uploaded': false,
    },
    relationships: {
      'registry-provider-version': {
        data: {
          id: 'provver-y5KZUsSBRLV9zCtL',
          type: 'registry-provider-versions',
        },
      },
    },
    links: {
      'provider-binary-upload': 'https://archivist.terraform.io/v1/object/dmF1b...',
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › Provider versions and platforms, "Get all platforms for a single version" sample response (200). */
export const PLATFORM_LIST_RESPONSE = {
  data: [
    {
      id: 'provpltfrm-GSHhNzptr9s3WoLD',
      type: 'registry-provider-platforms',
      attributes: {
        os: 'darwin',
        arch: 'amd64',
        filename: 'terraform-provider-aws_3.1.1_darwin_amd64.zip',
        shasum: 'fd580e71bd76d76913e1925f2641be9330c536464af9a08a5b8994da65a26cbc',
        permissions: {
          'can-delete': true,
          'can-upload-asset': true,
        },
        'provider-binary-uploaded': true,
      },
      relationships: {
        'registry-provider-version': {
          data: {
            id: 'provver-y5KZUsSBRLV9zCtL',
            type: 'registry-provider-versions',
          },
        },
      },
      links: {
        'provider-binary-download': 'https://archivist.terraform.io/v1/object/dmF1b...',
      },
    },
    {
      id: 'provpltfrm-A1PHitiM2KkKpVoM',
      type: 'registry-provider-platforms',
      attributes: {
        os: 'darwin',
        arch: 'arm64',
        filename: 'terraform-provider-aws_3.1.1_darwin_arm64.zip',
        shasum: 'de3c351d7f35a3c8c583c0da5c1c4d558b8cea3731a49b15f63de5bbbafc0165',
        permissions: {
          'can-delete': true,
          'can-upload-asset': true,
        },
        'provider-binary-uploaded': true,
      },
      relationships: {
        'registry-provider-version': {
          data: {
            id: 'provver-y5KZUsSBRLV9zCtL',
            type: 'registry-provider-versions',
          },
        },
      },
      links: {
        'provider-binary-download': 'https://archivist.terraform.io/v1/object/dmF1b...',
      },
    },
  ],
  links: {
    self: 'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws/versions/3.1.1/platforms?page%5Bnumber%5D=1&page%5Bsize%5D=20',
    first:
      'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws/versions/3.1.1/platforms?page%5Bnumber%5D=1&page%5Bsize%5D=20',
    prev: null,
    next: null,
    last: 'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws/versions/3.1.1/platforms?page%5Bnumber%5D=1&page%5Bsize%5D=20',
  },
  meta: {
    pagination: {
      'current-page': 1,
      'page-size': 20,
      'prev-page': null,
      'next-page': null,
      'total-pages': 1,
      'total-count': 2,
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › Provider versions and platforms, "Get a platform" sample response (200). */
export const PLATFORM_GET_RESPONSE = {
  data: {
    id: 'provpltfrm-BLJWvWyJ2QMs525k',
    type: 'registry-provider-platforms',
    attributes: {
      os: 'linux',
      arch: 'amd64',
      filename: 'terraform-provider-aws_3.1.1_linux_amd64.zip',
      shasum: '8f69533bc8afc227b40d15116358f91505bb638ce5919712fbb38a2dec1bba38',
      permissions: {
        'can-delete': true,
        'can-upload-asset': true,
      },
      'provider-binary-uploaded': true,
    },
    relationships: {
      'registry-provider-version': {
        data: {
          id: 'provver-y5KZUsSBRLV9zCtL',
          type: 'registry-provider-versions',
        },
      },
    },
    links: {
      'provider-binary-download': 'https://archivist.terraform.io/v1/object/dmF1b...',
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › Registry providers, "Create a Provider" sample payload (private provider). */
export const PROVIDER_CREATE_PAYLOAD = {
  data: {
    type: 'registry-providers',
    attributes: {
      name: 'aws',
      namespace: 'hashicorp',
      'registry-name': 'private',
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › Registry providers, "Create a Provider" sample response (private provider, 201). */
export const PROVIDER_CREATE_RESPONSE = {
  data: {
    id: 'prov-cmEmLstBfjNNA9F3',
    type: 'registry-providers',
    attributes: {
      name: 'aws',
      namespace: 'hashicorp',
      'registry-name': 'private',
      'created-at': '2022-02-11T19:16:59.533Z',
      'updated-at': '2022-02-11T19:16:59.533Z',
      permissions: {
        'can-delete': true,
      },
    },
    relationships: {
      organization: {
        data: {
          id: 'hashicorp',
          type: 'organizations',
        },
      },
      versions: {
        data: [],
        links: {
          related: '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws',
        },
      },
    },
    links: {
      self: '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws',
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › Registry providers, "Get a Provider" sample response (private provider, 200). */
export const PROVIDER_GET_RESPONSE = {
  data: {
    id: 'prov-cmEmLstBfjNNA9F3',
    type: 'registry-providers',
    attributes: {
      name: 'aws',
      namespace: 'hashicorp',
      'created-at': '2022-02-11T19:16:59.533Z',
      'updated-at': '2022-02-11T19:16:59.533Z',
      'registry-name': 'private',
      permissions: {
        'can-delete': true,
      },
    },
    relationships: {
      organization: {
        data: {
          id: 'hashicorp',
          type: 'organizations',
        },
      },
      versions: {
        data: [
          {
            id: 'provver-y5KZUsSBRLV9zCtL',
            type: 'registry-provider-versions',
          },
        ],
        links: {
          related: '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws',
        },
      },
    },
    links: {
      self: '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/aws',
    },
  },
} as const;

/**
 * HCP Terraform API docs, Private registry › Registry providers, "List Terraform Registry Providers for an
 * Organization" sample response (200): the envelope (top-level links and meta) only. The docs' two items are
 * public providers (no `versions` relationship) and the sample is cut with `...`; a private provider's list
 * item has the shape of the "Get a Provider" private sample above, which the tests use for the items.
 */
export const PROVIDER_LIST_ENVELOPE = {
  links: {
    self: 'https://app.terraform.io/api/v2/organizations/my-organization/registry-providers?page%5Bnumber%5D=1&page%5Bsize%5D=6',
    first:
      'https://app.terraform.io/api/v2/organizations/my-organization/registry-providers?page%5Bnumber%5D=1&page%5Bsize%5D=6',
    prev: null,
    next: 'https://app.terraform.io/api/v2/organizations/my-organization/registry-providers?page%5Bnumber%5D=2&page%5Bsize%5D=6',
    last: 'https://app.terraform.io/api/v2/organizations/my-organization/registry-providers?page%5Bnumber%5D=29&page%5Bsize%5D=6',
  },
  meta: {
    pagination: {
      'current-page': 1,
      'page-size': 6,
      'prev-page': null,
      'next-page': 2,
      'total-pages': 29,
      'total-count': 169,
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › GPG keys, "Add a GPG Key" sample payload. */
export const GPG_KEY_ADD_PAYLOAD = {
  data: {
    type: 'gpg-keys',
    attributes: {
      namespace: 'hashicorp',
      'ascii-armor':
        '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINB...=txfz\n-----END PGP PUBLIC KEY BLOCK-----\n',
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › GPG keys, "Add a GPG Key" sample response (201). */
export const GPG_KEY_ADD_RESPONSE = {
  data: {
    type: 'gpg-keys',
    id: '23',
    attributes: {
      'ascii-armor':
        '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINB...=txfz\n-----END PGP PUBLIC KEY BLOCK-----\n',
      'created-at': '2022-02-11T19:16:59Z',
      'key-id': '32966F3FB5AC1129',
      namespace: 'hashicorp',
      source: '',
      'source-url': null,
      'trust-signature': '',
      'updated-at': '2022-02-11T19:16:59Z',
    },
    links: {
      self: '/v2/gpg-keys/23',
    },
  },
} as const;

/** HCP Terraform API docs, Private registry › GPG keys, "Get GPG Key" sample response (200). */
export const GPG_KEY_GET_RESPONSE = {
  data: {
    type: 'gpg-keys',
    id: '2',
    attributes: {
      'ascii-armor':
        '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINB...=txfz\n-----END PGP PUBLIC KEY BLOCK-----\n',
      'created-at': '2022-02-24T17:07:25Z',
      'key-id': '32966F3FB5AC1129',
      namespace: 'hashicorp',
      source: '',
      'source-url': null,
      'trust-signature': '',
      'updated-at': '2022-02-24T17:07:25Z',
    },
    links: {
      self: '/v2/gpg-keys/2',
    },
  },
} as const;

/**
 * HCP Terraform API docs, Private registry › GPG keys, "List GPG Keys" sample response (200), for
 * `?filter[namespace]=my-organization,my-other-organization`. Its top-level `links` are relative and hold
 * exactly `first`, `last`, `next` and `prev` (no `self`); `meta.pagination` shows `page-size` 15.
 */
export const GPG_KEY_LIST_RESPONSE = {
  data: [
    {
      type: 'gpg-keys',
      id: '1',
      attributes: {
        'ascii-armor': '-----BEGIN PGP PUBLIC KEY BLOCK-----...',
        'created-at': '2022-02-08T19:15:47Z',
        'key-id': 'C4E5E6C66C79C778',
        namespace: 'my-other-organization',
        source: '',
        'source-url': null,
        'trust-signature': '',
        'updated-at': '2022-02-08T19:15:47Z',
      },
      links: {
        self: '/v2/gpg-keys/1',
      },
    },
    {
      type: 'gpg-keys',
      id: '140',
      attributes: {
        'ascii-armor': '-----BEGIN PGP PUBLIC KEY BLOCK-----...',
        'created-at': '2022-04-28T21:32:11Z',
        'key-id': 'C4E5E6C66C79C778',
        namespace: 'my-organization',
        source: '',
        'source-url': null,
        'trust-signature': '',
        'updated-at': '2022-04-28T21:32:11Z',
      },
      links: {
        self: '/v2/gpg-keys/140',
      },
    },
  ],
  links: {
    first:
      '/v2/gpg-keys?filter%5Bnamespace%5D=my-organization%2Cmy-other-organization&page%5Bnumber%5D=1&page%5Bsize%5D=15',
    last: '/v2/gpg-keys?filter%5Bnamespace%5D=my-organization%2Cmy-other-organization&page%5Bnumber%5D=1&page%5Bsize%5D=15',
    next: null,
    prev: null,
  },
  meta: {
    pagination: {
      'page-size': 15,
      'current-page': 1,
      'next-page': null,
      'prev-page': null,
      'total-pages': 1,
      'total-count': 2,
    },
  },
} as const;

/** HCP Terraform API docs, API docs overview › Rate Limiting, the 429 sample body ("status" is an integer there). */
export const RATE_LIMIT_RESPONSE = {
  errors: [
    {
      detail: "You have exceeded the API's rate limit.",
      status: 429,
      title: 'Too many requests',
    },
  ],
} as const;

/**
 * HCP Terraform API docs, Projects › the documented error sample (`api-docs/projects.mdx`): the JSON:API error
 * object layout, `status` as a string.
 */
export const ERROR_SAMPLE = {
  errors: [
    {
      status: '403',
      title: 'forbidden',
      detail: 'Workspace(s) not found, or you are not authorized to move them: ws-AQEct2XFuH4HBmS',
    },
  ],
} as const;

/**
 * The 422 the registry answers when a provider is created with an empty `registry-name`, as quoted by go-tfe's
 * `registry_provider_integration_test.go` (two error objects, both titled "invalid attribute"); an invalid,
 * non-empty value gives only the second detail.
 */
export const BLANK_REGISTRY_NAME_ERRORS = [
  { title: 'invalid attribute', detail: "Registry name can't be blank" },
  { title: 'invalid attribute', detail: 'Registry name is not included in the list' },
] as const;

/*
 * Provider version tags (HCP Terraform, 2026). Source: hashicorp/web-unified-docs,
 * content/terraform-docs-common/docs/cloud-docs/api-docs/private-registry/providers/version-tags.mdx (the same
 * samples in manage-provider-versions.mdx) and providers/index.mdx ("Versions List for a Registry Provider",
 * marked TFC:only), created 2026-07-15.
 */

/** version-tags.mdx, "List all tags for a provider version" sample response (200). */
export const VERSION_TAG_BINDINGS_RESPONSE = {
  data: [
    {
      id: 'tb-LDojeUQnBPGYbDdA',
      type: 'tag-bindings',
      attributes: { key: 'environment', value: 'dev', 'created-at': '2026-07-15T20:11:56.432Z' },
    },
    {
      id: 'tb-HPnKh5kf4TiGYMVr',
      type: 'tag-bindings',
      attributes: { key: 'environment', value: 'testing', 'created-at': '2026-07-15T20:11:56.437Z' },
    },
  ],
  links: {
    target:
      '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/test-provider/versions?version=5.14.0',
  },
} as const;

/** version-tags.mdx, "Add or update tags for a provider version" sample payload. */
export const VERSION_TAGS_PATCH_PAYLOAD = {
  data: {
    type: 'registry-provider-versions',
    relationships: {
      organization: { data: { type: 'organizations', id: 'hashicorp' } },
      'tag-bindings': {
        data: [
          { type: 'tag-bindings', attributes: { key: 'environment', value: 'dev' } },
          { type: 'tag-bindings', attributes: { key: 'environment', value: 'testing' } },
        ],
      },
    },
  },
} as const;

/**
 * version-tags.mdx, "Add or update tags for a provider version" sample response (200). Its platforms are named
 * `registry-provider-platforms` (the GET's `platforms`), and its platforms link names another version (5.14.0)
 * than the one patched (0.0.4): a test maps both through its vars.
 */
export const VERSION_TAGS_PATCH_RESPONSE = {
  data: {
    id: 'provver-E94qRpUHFZezgEWC',
    type: 'registry-provider-versions',
    attributes: {
      version: '0.0.4',
      'created-at': '2026-02-24T02:45:50.571Z',
      'updated-at': '2026-02-24T02:45:50.571Z',
      'key-id': '34365D9472D7468F',
      protocols: ['5.0'],
      permissions: { 'can-delete': true, 'can-upload-asset': true },
      'shasums-uploaded': false,
      'shasums-sig-uploaded': false,
    },
    relationships: {
      'registry-provider': { data: { id: 'prov-kYepEWv1vNWdKAsM', type: 'registry-providers' } },
      'tag-bindings': {
        links: { related: '/api/v2/registry-provider-versions/provver-E94qRpUHFZezgEWC/tag-bindings' },
      },
      'registry-provider-platforms': {
        data: [],
        links: {
          related:
            '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/test-provider/versions/5.14.0/platforms',
        },
      },
    },
    links: {
      'shasums-upload': 'https://archivist.terraform.io/v1/object/dmF1bHQ6djU6bjNHZW9jV3NhRUxjZGJma1',
      'shasums-sig-upload': 'https://archivist.terraform.io/v1/object/dmF1bHQ6djU6WnBVNlJ3Y2RzcEgxUHB',
    },
  },
} as const;

/** providers/index.mdx, "Versions List for a Registry Provider" sample response (200), TFC only. */
export const TAGGED_VERSION_LIST_RESPONSE = {
  data: [
    {
      id: 'e2ba610c-3fc1-414d-9c7e-adf446082019',
      type: 'ephemeral-registry-provider-versions',
      attributes: { version: '3.9.0', tags: [], status: '', name: 'random', namespace: 'hashicorp' },
    },
    {
      id: '1107200c-f2f7-4c1a-a73e-1c86373841ad',
      type: 'ephemeral-registry-provider-versions',
      attributes: { version: '3.7.1', tags: [], status: '', name: 'random', namespace: 'hashicorp' },
    },
    {
      id: '6fde0eed-f828-4c3d-8f2b-49b4691c7c76',
      type: 'ephemeral-registry-provider-versions',
      attributes: { version: '3.6.0', tags: [], status: '', name: 'random', namespace: 'hashicorp' },
    },
    {
      id: 'a7845950-337c-4a94-924e-ea0d9a1be06f',
      type: 'ephemeral-registry-provider-versions',
      attributes: { version: '3.5.1', tags: [], status: '', name: 'random', namespace: 'hashicorp' },
    },
  ],
  links: {
    self: 'https://app.terraform.io/api/v2/organizations/RAUC/registry-providers/public/hashicorp/random/versions',
    prev: null,
    next: 'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/public/hashicorp/random/versions?page[number]=2&page[size]=20',
    first:
      'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/public/hashicorp/random/versions?page[number]=1&page[size]=20',
    last: 'https://app.terraform.io/api/v2/organizations/hashicorp/registry-providers/public/hashicorp/random/versions?page[number]=2&page[size]=20',
  },
  meta: {
    pagination: {
      'current-page': 1,
      'next-page': 2,
      'prev-page': null,
      'page-size': 20,
      'total-pages': 1,
      'total-count': 4,
    },
  },
} as const;

/**
 * providers/index.mdx, "Sample response with query parameters" (200), for
 * `?page[number]=1&page[size]=20&filter[tagged][0][key]=environment&filter[tagged][0][value]=testing`. Its item
 * `type` (`public-registry-provider-versions`) and `id` ("16") differ from the unfiltered sample's.
 */
export const TAG_FILTERED_VERSION_LIST_RESPONSE = {
  data: [
    {
      id: '16',
      type: 'public-registry-provider-versions',
      attributes: {
        version: '3.1.3',
        tags: [{ key: 'environment', value: 'testing' }],
        status: '',
        name: 'random',
        namespace: 'hashicorp',
      },
    },
  ],
  links: {
    self: 'https://app.terraform.io/api/v2/organizations/RAUC/registry-providers/public/hashicorp/random/versions?filter%5Btagged%5D%5B0%5D%5Bkey%5D=environment&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=testing&page%5Bnumber%5D=1&page%5Bsize%5D=20',
    first:
      'https://app.terraform.io/api/v2/organizations/RAUC/registry-providers/public/hashicorp/random/versions?filter%5Btagged%5D%5B0%5D%5Bkey%5D=environment&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=testing&page%5Bnumber%5D=1&page%5Bsize%5D=20',
    prev: null,
    next: null,
    last: 'https://app.terraform.io/api/v2/organizations/RAUC/registry-providers/public/hashicorp/random/versions?filter%5Btagged%5D%5B0%5D%5Bkey%5D=environment&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=testing&page%5Bnumber%5D=1&page%5Bsize%5D=20',
  },
  meta: {
    pagination: {
      'current-page': 1,
      'page-size': 20,
      'prev-page': null,
      'next-page': null,
      'total-pages': 1,
      'total-count': 1,
    },
  },
} as const;
