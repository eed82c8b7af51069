import { describe, it, expect } from 'vitest';
import { parseHostname } from '../../src/config/hostname.js';
import { usageErrorOf } from './helpers.js';

describe('parseHostname', () => {
  it.each([
    ['app.terraform.io', 'https://app.terraform.io', 'app.terraform.io', 'app.terraform.io'],
    ['APP.Terraform.IO', 'https://app.terraform.io', 'app.terraform.io', 'app.terraform.io'],
    ['  app.terraform.io  ', 'https://app.terraform.io', 'app.terraform.io', 'app.terraform.io'],
    ['app.terraform.io/', 'https://app.terraform.io', 'app.terraform.io', 'app.terraform.io'],
    ['tfe.example.com:8443', 'https://tfe.example.com:8443', 'tfe.example.com:8443', 'tfe.example.com'],
    ['tfe.example.com:443', 'https://tfe.example.com', 'tfe.example.com', 'tfe.example.com'],
    ['localhost', 'https://localhost', 'localhost', 'localhost'],
    ['café.fr', 'https://xn--caf-dma.fr', 'xn--caf-dma.fr', 'xn--caf-dma.fr'],
    ['[::1]:8080', 'https://[::1]:8080', '[::1]:8080', '[::1]'],
    ['https://app.terraform.io', 'https://app.terraform.io', 'app.terraform.io', 'app.terraform.io'],
    ['https://app.terraform.io/', 'https://app.terraform.io', 'app.terraform.io', 'app.terraform.io'],
    [
      'https://app.terraform.io/app/acme/workspaces',
      'https://app.terraform.io',
      'app.terraform.io',
      'app.terraform.io',
    ],
    ['HTTPS://TFE.Example.com', 'https://tfe.example.com', 'tfe.example.com', 'tfe.example.com'],
    [
      'https://tfe.example.com:8443/',
      'https://tfe.example.com:8443',
      'tfe.example.com:8443',
      'tfe.example.com',
    ],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080', '127.0.0.1:8080', '127.0.0.1'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080', '127.0.0.1:8080', '127.0.0.1'],
    ['http://localhost:80', 'http://localhost', 'localhost', 'localhost'],
    ['http://[::1]:8080', 'http://[::1]:8080', '[::1]:8080', '[::1]'],
  ])('%j → %s (host %s, hostname %s)', (input, baseUrl, host, hostname) => {
    expect(parseHostname(input, '--hostname')).toEqual({ baseUrl, host, hostname });
  });

  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    ['ftp://tfe.example.com', 'http or https'],
    ['file:///etc/passwd', 'http or https'],
    ['ws://tfe.example.com', 'http or https'],
    ['https://user:secret@tfe.example.com', 'user name or password'],
    ['https://user@tfe.example.com', 'user name or password'],
    ['https://tfe.example.com/?a=1', 'query'],
    ['https://tfe.example.com?', 'query'],
    ['https://tfe.example.com#top', 'fragment'],
    ['user@tfe.example.com', 'only have a port'],
    ['tfe.example.com/api/v2', 'only have a port'],
    ['tfe.example.com?x=1', 'only have a port'],
    ['has space.com', 'only have a port'],
    ['tfe.example.com:abc', 'only have a port'],
    ['tfe.example.com:99999', 'cannot be parsed'],
    ['https://', 'cannot be parsed'],
    ['http://:80', 'cannot be parsed'],
  ])('refuses %j (%s), naming the source', (input, reason) => {
    const error = usageErrorOf(() => parseHostname(input, 'TFE_ADDRESS'));
    expect(error.message).toMatch(/^TFE_ADDRESS: /);
    expect(error.message).toContain(`"${input.replace(/\/\/[^/@]*@/, '//***@')}"`);
    expect(error.message).toContain(reason);
    expect(error.hint).toContain('app.terraform.io');
    expect(error.hint).toContain('http://127.0.0.1:8080');
  });

  it('does not echo a password given in the URL', () => {
    const error = usageErrorOf(() => parseHostname('https://me:hunter2@tfe.example.com', '--hostname'));
    expect(error.message).not.toContain('hunter2');
    expect(error.message).toContain('https://***@tfe.example.com');
  });
});
